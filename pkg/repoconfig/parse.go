// Package repoconfig reads a repository's own file, .redfix.yaml, at the
// commit being repaired, strictly (an unknown key, a wrong type, a bad glob
// is an error naming the key and its line), and narrows the central
// configuration with it into a Policy: a repository can turn redfix off,
// forbid paths, lower its limits, name reviewers and labels, but never
// widen what the central configuration allows.
package repoconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/redfix/redfix/pkg/testenv"
)

// FileName is the file's name at the top of a repository.
const FileName = ".redfix.yaml"

// MaxFileBytes bounds the file: a larger one is invalid, and is not read.
const MaxFileBytes = 64 << 10

// File is .redfix.yaml as written: a nil field was not given.
type File struct {
	Version   *int       `yaml:"version"`
	Enabled   *bool      `yaml:"enabled"`
	Paths     *Paths     `yaml:"paths"`
	Languages *Languages `yaml:"languages"`
	Reviewers []string   `yaml:"reviewers"`
	Labels    []string   `yaml:"labels"`
	Limits    *Limits    `yaml:"limits"`
	Revert    *Revert    `yaml:"revert"`
	Forks     *bool      `yaml:"forks"`
	// Tests are what the repository's tests need of every run.
	Tests *testenv.Settings `yaml:"tests"`
}

// Paths are globs over paths in the repository ("internal/**", "*.pb.go").
type Paths struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// Languages override the driver. TestCommand is read and never used:
// redfix runs each language's test runner itself, to read its report; a
// file that names one has it held (see Narrow), and tests.args adds the
// runner's options instead.
type Languages struct {
	Driver      string `yaml:"driver"`
	TestCommand string `yaml:"test_command"`
}

// Limits lower the central limits.
type Limits struct {
	OpenPullRequests *int `yaml:"open_pull_requests"`
	RepairsPerDay    *int `yaml:"repairs_per_day"`
}

// Revert narrows the revert policy.
type Revert struct {
	Enabled    *bool     `yaml:"enabled"`
	MaxAge     *Duration `yaml:"max_age"`
	FirstPaths []string  `yaml:"first_paths"`
}

// Duration is a Go duration written as text ("12h", "90m").
type Duration time.Duration

// UnmarshalYAML reads a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if n.Kind != yaml.ScalarNode || n.Decode(&s) != nil {
		return fmt.Errorf("line %d: want a duration such as \"24h\"", n.Line)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("line %d: %q is not a positive duration such as \"24h\"", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// keys are the known keys of each mapping, by its place in the file.
var keys = map[string][]string{
	"":          {"version", "enabled", "paths", "languages", "reviewers", "labels", "limits", "revert", "forks", "tests"},
	"paths":     {"allow", "deny"},
	"languages": {"driver", "test_command"},
	"limits":    {"open_pull_requests", "repairs_per_day"},
	"revert":    {"enabled", "max_age", "first_paths"},
	"tests":     {"env", "args", "dependency_groups"},
}

// Drivers are the language drivers a file may name.
var Drivers = []string{"go", "python", "node"}

// Parse reads data strictly. Every problem found is reported, each with
// its line; an empty file is an error (version is required).
func Parse(data []byte) (File, error) {
	var f File
	if len(data) > MaxFileBytes {
		return f, fmt.Errorf("%s is %d bytes, more than the %d allowed", FileName, len(data), MaxFileBytes)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return f, errors.New("the file is empty: it needs at least \"version: 1\"")
		}
		return f, fmt.Errorf("not YAML: %w", err)
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		return f, fmt.Errorf("line %d: a second YAML document; the file holds one", extra.Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return f, fmt.Errorf("line %d: the file must be a mapping of keys (version: 1, …)", root.Line)
	}
	var errs []error
	errs = append(errs, unknownKeys(root, "")...)
	if len(errs) > 0 {
		return f, errors.Join(errs...)
	}
	if err := root.Decode(&f); err != nil {
		return f, typeError(root, err)
	}
	errs = append(errs, f.validate(root)...)
	return f, errors.Join(errs...)
}

// unknownKeys reports the keys that are not known at their place.
func unknownKeys(m *yaml.Node, at string) []error {
	known := keys[at]
	var errs []error
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := join(at, k.Value)
		if !slices.Contains(known, k.Value) {
			errs = append(errs, fmt.Errorf("line %d: unknown key %q%s (known: %s)", k.Line, name, inWhere(at), strings.Join(known, ", ")))
			continue
		}
		if seen[k.Value] {
			errs = append(errs, fmt.Errorf("line %d: key %q given twice", k.Line, name))
		}
		seen[k.Value] = true
		if _, nested := keys[name]; nested {
			if v.Kind != yaml.MappingNode {
				errs = append(errs, fmt.Errorf("line %d: %q must be a mapping (%s)", v.Line, name, strings.Join(keys[name], ", ")))
				continue
			}
			errs = append(errs, unknownKeys(v, name)...)
		}
	}
	return errs
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func inWhere(at string) string {
	if at == "" {
		return ""
	}
	return " in " + at
}

// typeError rewrites yaml.v3's unmarshal errors into one line each, naming
// the key of the line.
func typeError(root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var errs []error
	for _, e := range te.Errors {
		e = strings.Replace(e, "!!str", "text", 1)
		var line int
		if _, serr := fmt.Sscanf(e, "line %d:", &line); serr == nil {
			if key := keyAt(root, "", line); key != "" {
				e = strings.Replace(e, ": ", ": "+key+": ", 1)
			}
		}
		errs = append(errs, errors.New(e))
	}
	return errors.Join(errs...)
}

// keyAt is the dotted key whose value starts on line, or "".
func keyAt(m *yaml.Node, at string, line int) string {
	for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind == yaml.MappingNode {
			if key := keyAt(v, join(at, k.Value), line); key != "" {
				return key
			}
		}
		if k.Line == line || v.Line == line {
			return join(at, k.Value)
		}
	}
	return ""
}

// validate checks the values, naming each key and its line.
func (f File) validate(root *yaml.Node) []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("line %d: %s: %s", lineOf(root, key), key, fmt.Sprintf(format, args...)))
	}
	switch {
	case f.Version == nil:
		errs = append(errs, errors.New("version is missing: the file must start with \"version: 1\""))
	case *f.Version != 1:
		bad("version", "must be 1, got %d", *f.Version)
	}
	if f.Paths != nil {
		for i, g := range f.Paths.Allow {
			if err := CheckGlob(g); err != nil {
				bad("paths.allow", "item %d: %v", i+1, err)
			}
		}
		for i, g := range f.Paths.Deny {
			if err := CheckGlob(g); err != nil {
				bad("paths.deny", "item %d: %v", i+1, err)
			}
		}
	}
	if f.Languages != nil {
		if d := f.Languages.Driver; d != "" && !slices.Contains(Drivers, d) {
			bad("languages.driver", "must be one of %s, got %q", strings.Join(Drivers, ", "), d)
		}
		if strings.ContainsAny(f.Languages.TestCommand, "\x00\n") {
			bad("languages.test_command", "must be one line")
		}
	}
	for i, r := range f.Reviewers {
		if !validReviewer(r) {
			bad("reviewers", "item %d: %q is not a user or an org/team", i+1, r)
		}
	}
	for i, l := range f.Labels {
		if strings.TrimSpace(l) == "" || len(l) > 50 || strings.ContainsAny(l, "\n\r,") {
			bad("labels", "item %d: %q is not a label (1 to 50 characters, no comma or newline)", i+1, l)
		}
	}
	if f.Limits != nil {
		// 0 would read as "no limit" and widen a central one: to stop
		// repairs a repository writes enabled: false.
		if n := f.Limits.OpenPullRequests; n != nil && *n < 1 {
			bad("limits.open_pull_requests", "must be at least 1, got %d (enabled: false stops redfix)", *n)
		}
		if n := f.Limits.RepairsPerDay; n != nil && *n < 1 {
			bad("limits.repairs_per_day", "must be at least 1, got %d (enabled: false stops redfix)", *n)
		}
	}
	if f.Revert != nil {
		for i, g := range f.Revert.FirstPaths {
			if err := CheckGlob(g); err != nil {
				bad("revert.first_paths", "item %d: %v", i+1, err)
			}
		}
	}
	if f.Tests != nil {
		errs = append(errs, testsErrors(root, *f.Tests)...)
	}
	return errs
}

// testsErrors are the problems of the tests: section (testenv.Check),
// each with the line of the key it is about (a variable's own).
func testsErrors(root *yaml.Node, t testenv.Settings) []error {
	type part struct {
		key string
		s   testenv.Settings
	}
	parts := []part{{"tests.args", testenv.Settings{Args: t.Args}}, {"tests.dependency_groups", testenv.Settings{DependencyGroups: t.DependencyGroups}}}
	if len(t.Env) > testenv.MaxVars {
		parts = append(parts, part{"tests.env", testenv.Settings{Env: t.Env}})
	} else {
		for _, kv := range (testenv.Settings{Env: t.Env}).Environ() {
			k, v, _ := strings.Cut(kv, "=")
			parts = append(parts, part{"tests.env." + k, testenv.Settings{Env: map[string]string{k: v}}})
		}
	}
	var errs []error
	for _, p := range parts {
		for _, err := range p.s.Check("tests") {
			errs = append(errs, fmt.Errorf("line %d: %w", lineOf(root, p.key), err))
		}
	}
	return errs
}

// validReviewer is a login or "org/team" on the repository's forge.
func validReviewer(r string) bool {
	parts := strings.Split(r, "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 100 {
			return false
		}
		for _, c := range p {
			if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// CheckGlob reports a glob that cannot match as meant: empty, absolute,
// climbing out with "..", or a segment path.Match refuses.
func CheckGlob(g string) error {
	if strings.TrimSpace(g) == "" {
		return errors.New("an empty glob")
	}
	if strings.HasPrefix(g, "/") {
		return fmt.Errorf("%q is absolute; globs are relative to the repository's top", g)
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == ".." {
			return fmt.Errorf("%q climbs out with \"..\"", g)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("%q is not a glob: %v", g, err)
		}
	}
	return nil
}

// lineOf is the line of a dotted key ("paths.deny"), or 0.
func lineOf(root *yaml.Node, key string) int {
	n := root
	line := 0
	for _, part := range strings.Split(key, ".") {
		found := false
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}
