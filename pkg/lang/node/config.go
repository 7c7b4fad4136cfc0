package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/protected"
	"github.com/redfix/redfix/pkg/unidiff"
)

// What decides which tests run and how they count is not the code's to
// change: the runners' configuration files (isRunnerFile), their setup
// files, vite's test section, package.json's jest and mocha keys and its
// test scripts.

// RunnerConfigViolations are the changes of a patch to the test runners'
// configuration and setup, whatever the policy on test edits.
func (Driver) RunnerConfigViolations(dir string, f unidiff.File) []string {
	bad := configViolations(dir, f)
	if p := f.Path(); !isRunnerFile(p) && setupFiles(dir)[p] {
		bad = append(bad, fmt.Sprintf("%s: %s a setup file the test runner's configuration names (it runs before the tests and decides what they see)", p, f.Verb()))
	}
	return bad
}

// viteConfigRE matches vite's configuration, whose test section is
// vitest's.
var viteConfigRE = regexp.MustCompile(`^vite\.config(\.[\w-]+)*\.[cm]?[jt]s$`)

// configViolations are the changes of a patch to the test runners'
// configuration, whatever the policy on test edits.
func configViolations(dir string, f unidiff.File) []string {
	p := f.Path()
	base := path.Base(p)
	switch {
	case isRunnerFile(p):
		return []string{fmt.Sprintf("%s: %s the test runner's configuration or setup (it decides which tests run and how they count)", p, f.Verb())}
	case viteConfigRE.MatchString(base):
		return viteTestSection(dir, f)
	case base == "package.json":
		return packageTestChanges(dir, f)
	}
	return nil
}

// viteTestSection reports a change to the test property of vite's
// configuration (vitest's settings), read with tree-sitter before and
// after the patch.
func viteTestSection(dir string, f unidiff.File) []string {
	before, after, ok := gaterules.Sides(dir, f)
	if !ok {
		return []string{fmt.Sprintf("%s: %s vite's configuration, whose test section cannot be compared", f.Path(), f.Verb())}
	}
	section := func(rel string, src []byte) string {
		if rel == "" {
			return ""
		}
		t, ok := parseTree(rel, src)
		if !ok {
			return ""
		}
		defer t.close()
		out := ""
		walk(t.root(), func(n *sitter.Node) bool {
			if out != "" {
				return false
			}
			if n.Kind() == "pair" {
				if k := n.ChildByFieldName("key"); k != nil && strings.Trim(t.text(k), `'"`) == "test" {
					out = strings.Join(strings.Fields(t.text(n)), " ")
					return false
				}
			}
			return true
		})
		return out
	}
	if section(f.OldPath, before) == section(f.NewPath, after) {
		return nil
	}
	return []string{fmt.Sprintf("%s: changes the test section of vite's configuration (vitest's settings decide which tests run and how they count)", f.Path())}
}

// packageTestKeys are package.json's keys that configure a runner.
var packageTestKeys = []string{"jest", "mocha", "ava", "vitest", "c8", "nyc"}

// packageScriptRE matches the scripts that run the tests.
var packageScriptRE = regexp.MustCompile(`^(pre|post)?test([:._-].*)?$`)

// packageTestChanges reports the changes of package.json's runner keys
// and test scripts: both sides are read as JSON; a side that is not JSON
// is read by its changed lines.
func packageTestChanges(dir string, f unidiff.File) []string {
	p := f.Path()
	before, after, ok := gaterules.Sides(dir, f)
	var b, a map[string]json.RawMessage
	if ok && (f.OldPath == "" || json.Unmarshal(before, &b) == nil) && (f.NewPath == "" || json.Unmarshal(after, &a) == nil) {
		var bad []string
		for _, k := range packageTestKeys {
			if !jsonEqual(b[k], a[k]) {
				bad = append(bad, fmt.Sprintf("%s: changes the %q key (the test runner's configuration)", p, k))
			}
		}
		var bs, as map[string]json.RawMessage
		_ = json.Unmarshal(b["scripts"], &bs)
		_ = json.Unmarshal(a["scripts"], &as)
		names := map[string]bool{}
		for k := range bs {
			names[k] = true
		}
		for k := range as {
			names[k] = true
		}
		for _, k := range gaterules.SortedKeys(names) {
			if packageScriptRE.MatchString(k) && !jsonEqual(bs[k], as[k]) {
				bad = append(bad, fmt.Sprintf("%s: changes the %q script (it decides how the tests run)", p, k))
			}
		}
		return bad
	}
	lineRE := regexp.MustCompile(`^"(` + strings.Join(packageTestKeys, "|") + `|(pre|post)?test([:._-][^"]*)?)"\s*:`)
	var bad []string
	for _, l := range f.Changes() {
		if t := gaterules.Norm(l.Text); lineRE.MatchString(t) {
			bad = append(bad, fmt.Sprintf("%s:%d: changes the tests' configuration or script: %s", p, l.Number(), t))
		}
	}
	return bad
}

// jsonEqual compares two JSON values by meaning (spacing and key order
// aside); an absent value equals only another.
func jsonEqual(x, y json.RawMessage) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	var a, b any
	if json.Unmarshal(x, &a) != nil || json.Unmarshal(y, &b) != nil {
		return bytes.Equal(x, y)
	}
	ma, _ := json.Marshal(a)
	mb, _ := json.Marshal(b)
	return bytes.Equal(ma, mb)
}

// setupKeys are the configuration keys (jest's, vitest's, mocha's) whose
// values are files the runner loads before or around the tests.
var setupKeys = map[string]bool{
	"setupFiles": true, "setupFilesAfterEnv": true, "globalSetup": true, "globalTeardown": true,
	"testEnvironment": true, "snapshotResolver": true, "testSequencer": true, "reporters": true,
	"require": true, "file": true,
}

// setupFiles are the files of the checkout at dir that the runners'
// configuration names as setup (jest's setupFiles, setupFilesAfterEnv,
// globalSetup and testEnvironment, vitest's setupFiles and globalSetup,
// mocha's require and file), read from package.json, the runners' and
// vite's configuration files and .mocharc.* at the root. A setup file runs
// before every test: changing it changes what every test sees, whatever
// its name.
func setupFiles(dir string) map[string]bool {
	s := setupSet{dir: dir, files: map[string]bool{}}
	names, _ := gaterules.ListFiles(dir, ".")
	for _, name := range names {
		kind := setupSource(name)
		if kind == "" {
			continue
		}
		data, err := gaterules.Read(dir, name)
		if err != nil {
			continue
		}
		switch kind {
		case "package.json":
			var pkg map[string]json.RawMessage
			if json.Unmarshal(data, &pkg) == nil {
				for _, k := range []string{"jest", "mocha", "vitest"} {
					var v any
					if json.Unmarshal(pkg[k], &v) == nil {
						s.fromJSON(v, "")
					}
				}
			}
		case "yaml":
			s.fromMocharc(string(data))
		case "json":
			var v any
			if json.Unmarshal(data, &v) == nil {
				s.fromJSON(v, "")
			}
		case "script":
			s.fromScript(name, data)
		}
	}
	return s.files
}

// setupSource says how a file at the root names setup files: as
// package.json, a YAML .mocharc, a JSON configuration or a script; "" for
// a file that names none.
func setupSource(name string) string {
	lower := strings.ToLower(name)
	runner := isRunnerFile(name) || viteConfigRE.MatchString(lower)
	switch {
	case lower == "package.json":
		return "package.json"
	case strings.HasPrefix(lower, ".mocharc") && (strings.HasSuffix(lower, ".yml") || strings.HasSuffix(lower, ".yaml")):
		return "yaml"
	case strings.HasPrefix(lower, ".mocharc") && strings.HasSuffix(lower, "json") || runner && strings.HasSuffix(lower, ".json"):
		return "json"
	case runner && isSourceExt(path.Ext(name)):
		return "script"
	}
	return ""
}

// setupSet gathers the setup files a checkout's configuration names.
type setupSet struct {
	dir   string
	files map[string]bool
}

// add adds the file a setup spec names: a path in the checkout (with an
// extension, or the first of sourceExts it has); a package's name is not
// one.
func (s setupSet) add(spec string) {
	spec = strings.TrimPrefix(spec, "<rootDir>/")
	if spec == "" || strings.HasPrefix(spec, "/") || !(strings.HasPrefix(spec, ".") || strings.Contains(spec, "/")) {
		return // a package's name
	}
	p := path.Clean(spec)
	if strings.HasPrefix(p, "../") || p == ".." || p == "." {
		return
	}
	if isSourceExt(path.Ext(p)) {
		s.files[p] = true
		return
	}
	for _, ext := range sourceExts {
		if _, err := gaterules.Read(s.dir, p+ext); err == nil {
			s.files[p+ext] = true
			return
		}
	}
}

// fromJSON adds the strings under setup keys of a JSON configuration.
func (s setupSet) fromJSON(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			s.fromJSON(x, k)
		}
	case []any:
		for _, x := range v {
			s.fromJSON(x, key)
		}
	case string:
		if setupKeys[key] {
			s.add(v)
		}
	}
}

// fromMocharc adds the files a YAML .mocharc requires or loads.
func (s setupSet) fromMocharc(text string) {
	key := ""
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if item, ok := strings.CutPrefix(t, "- "); ok {
			if key == "require" || key == "file" {
				s.add(strings.Trim(strings.TrimSpace(item), `'"`))
			}
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(k)
		if v = strings.TrimSpace(v); v != "" && (key == "require" || key == "file") {
			s.add(strings.Trim(v, `'"`))
		}
	}
}

// fromScript adds the strings under setup keys of a configuration written
// in JavaScript or TypeScript, read with tree-sitter.
func (s setupSet) fromScript(name string, src []byte) {
	t, ok := parseTree(name, src)
	if !ok {
		return
	}
	defer t.close()
	walk(t.root(), func(n *sitter.Node) bool {
		if n.Kind() != "pair" {
			return true
		}
		k, v := n.ChildByFieldName("key"), n.ChildByFieldName("value")
		if k == nil || v == nil || !setupKeys[strings.Trim(t.text(k), `'"`)] {
			return true
		}
		walk(v, func(x *sitter.Node) bool {
			if str, ok := literal(x, src); ok {
				s.add(str)
				return false
			}
			return true
		})
		return false
	})
}

// ProtectedFiles are JavaScript's and TypeScript's protected files: the
// linter's and the type checker's configuration, which decide what CI's
// checks (and the static gate's) let through; eslint.config.js is code
// and still protected.
func (Driver) ProtectedFiles() []protected.Kind {
	return []protected.Kind{{
		What: protected.CI.What, Why: protected.CI.Why, Code: true,
		Names: []string{".eslintrc", ".eslintrc.*", "eslint.config.*", ".eslintignore", "tsconfig.json", "tsconfig.*.json", "jsconfig.json"},
	}}
}
