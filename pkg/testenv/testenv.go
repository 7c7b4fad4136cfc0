// Package testenv is what a repository's tests need of every run, as its
// .redfix.yaml or the central configuration names it: variables of the
// test environment (from an allowlist: never a credential, never one that
// steers redfix's own tools or the sandbox), extra arguments of the test
// runner, and the dependency groups setup installs. It checks them; the
// language drivers apply them (pkg/lang.Configure).
package testenv

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Settings are a repository's tests' needs. The zero Settings change
// nothing.
type Settings struct {
	// Env are variables every test run of the repository sees, on top of
	// the sandbox's scrubbed environment and the driver's own.
	Env map[string]string `yaml:"env"`
	// Args are options added to every invocation of the test runner, each
	// one option with its value joined ("--import-mode=importlib").
	Args []string `yaml:"args"`
	// DependencyGroups are the groups of declared dependencies setup
	// installs (a driver without groups ignores them); none: the tests'
	// groups where the project declares them.
	DependencyGroups []string `yaml:"dependency_groups"`
}

// Bounds of what a repository may name.
const (
	MaxVars       = 32
	MaxNameBytes  = 64
	MaxValueBytes = 1024
	MaxArgs       = 32
	MaxArgBytes   = 256
	MaxGroups     = 16
)

// IsZero says the settings change nothing.
func (s Settings) IsZero() bool {
	return len(s.Env) == 0 && len(s.Args) == 0 && len(s.DependencyGroups) == 0
}

// Environ is Env as NAME=value lines, sorted by name.
func (s Settings) Environ() []string {
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = k + "=" + s.Env[k]
	}
	return out
}

// Merge is s with over's settings laid on it: over's variables win over
// s's of the same name, its arguments come after s's, and its dependency
// groups replace s's when it names any.
func (s Settings) Merge(over Settings) Settings {
	out := Settings{Args: append(slices.Clone(s.Args), over.Args...), DependencyGroups: slices.Clone(s.DependencyGroups)}
	if len(s.Env)+len(over.Env) > 0 {
		out.Env = map[string]string{}
		for k, v := range s.Env {
			out.Env[k] = v
		}
		for k, v := range over.Env {
			out.Env[k] = v
		}
	}
	if len(over.DependencyGroups) > 0 {
		out.DependencyGroups = slices.Clone(over.DependencyGroups)
	}
	return out
}

// String says the settings as a task's evidence shows them: the
// variables with their values (allowlisted names, none a credential's),
// the arguments and the groups; "" for none.
func (s Settings) String() string {
	var parts []string
	if env := s.Environ(); len(env) > 0 {
		parts = append(parts, "env "+strings.Join(env, " "))
	}
	if len(s.Args) > 0 {
		parts = append(parts, "args "+strings.Join(s.Args, " "))
	}
	if len(s.DependencyGroups) > 0 {
		parts = append(parts, "dependency groups "+strings.Join(s.DependencyGroups, ", "))
	}
	return strings.Join(parts, "; ")
}

// Check reports every problem of the settings, each naming the key under
// at ("tests") and the item.
func (s Settings) Check(at string) []error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", at, key, fmt.Sprintf(format, a...)))
	}
	if len(s.Env) > MaxVars {
		bad("env", "%d variables, more than the %d allowed", len(s.Env), MaxVars)
	}
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := CheckName(k); err != nil {
			bad("env", "%v", err)
			continue
		}
		if err := CheckValue(s.Env[k]); err != nil {
			bad("env."+k, "%v", err)
		}
	}
	if len(s.Args) > MaxArgs {
		bad("args", "%d arguments, more than the %d allowed", len(s.Args), MaxArgs)
	}
	for i, a := range s.Args {
		if err := CheckArg(a); err != nil {
			bad("args", "item %d: %v", i+1, err)
		}
	}
	if len(s.DependencyGroups) > MaxGroups {
		bad("dependency_groups", "%d groups, more than the %d allowed", len(s.DependencyGroups), MaxGroups)
	}
	for i, g := range s.DependencyGroups {
		if !groupName(g) {
			bad("dependency_groups", "item %d: %q is not a group's name (letters, digits, '-', '_', '.'; at most 64)", i+1, g)
		}
	}
	return errs
}

// CheckArg refuses an argument that is empty, too long, more than one line,
// or not an option: a bare word would name tests or paths, and which tests
// run is redfix's to say. What an option means is the driver's to judge
// (see lang.Configure).
func CheckArg(a string) error {
	switch {
	case len(a) > MaxArgBytes:
		return fmt.Errorf("%d bytes, more than the %d allowed", len(a), MaxArgBytes)
	case strings.ContainsAny(a, "\x00\r\n"):
		return fmt.Errorf("%q is more than one line", a)
	case !strings.HasPrefix(a, "-") || strings.TrimLeft(a, "-") == "":
		return fmt.Errorf("%q is not an option: each item is one option with its value joined (\"--import-mode=importlib\", \"-pno:randomly\"); which tests run is redfix's to say", a)
	}
	return nil
}

// CheckValue refuses a value that is too long or not one line.
func CheckValue(v string) error {
	switch {
	case len(v) > MaxValueBytes:
		return fmt.Errorf("the value is %d bytes, more than the %d allowed", len(v), MaxValueBytes)
	case strings.ContainsAny(v, "\x00\r\n"):
		return errors.New("the value is more than one line")
	}
	return nil
}

func groupName(g string) bool {
	if g == "" || len(g) > 64 {
		return false
	}
	for _, c := range g {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Refusal is options a driver does not take from a repository, and why.
type Refusal struct {
	Why     string
	Options []string
}

// Refuse is refusals as CheckOptions reads them: option → why.
func Refuse(refusals ...Refusal) map[string]string {
	m := map[string]string{}
	for _, r := range refusals {
		for _, o := range r.Options {
			m[o] = r.Why
		}
	}
	return m
}

// CheckOptions refuses the first argument that is one of refused's
// options (option → why the driver does not take it from a repository):
// the option itself, the option with "=" and its value, one of its dotted
// sub-options ("--coverage.enabled"), or a one-letter option with its
// value glued on ("-kfoo").
func CheckOptions(args []string, refused map[string]string) error {
	for _, a := range args {
		for opt, why := range refused {
			short := len(opt) == 2 && opt[0] == '-' && opt[1] != '-'
			if a == opt || strings.HasPrefix(a, opt+"=") || strings.HasPrefix(a, opt+".") || short && strings.HasPrefix(a, opt) {
				return fmt.Errorf("%q: %s", a, why)
			}
		}
	}
	return nil
}

// CheckAllowed refuses the first argument that is none of allowed's
// options (alone, or with "=" and its value).
func CheckAllowed(args []string, allowed []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if !slices.Contains(allowed, name) {
			return fmt.Errorf("%q: not an option this driver takes from a repository (%s)", a, strings.Join(allowed, ", "))
		}
	}
	return nil
}
