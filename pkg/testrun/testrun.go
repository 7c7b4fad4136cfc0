// Package testrun runs Go tests in a checkout and says, test by test, what
// happened. A TESTID is a test as reports name it: "import/path.TestName",
// "import/path.TestName/subtest", or a bare "TestName[/subtest]" wherever that
// name is unambiguous in the repository.
package testrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
)

// Target is a resolved test.
type Target struct {
	ID         string // the canonical id: ImportPath.Test
	ImportPath string
	Dir        string // relative to the module root, "./x/y" or "."
	Test       string // TestName or TestName/sub
}

// Func is the top-level test function's name.
func (t Target) Func() string { name, _, _ := strings.Cut(t.Test, "/"); return name }

// ErrNotFound and ErrAmbiguous are returned by Resolve.
var (
	ErrNotFound  = errors.New("test not found")
	ErrAmbiguous = errors.New("test name is ambiguous")
)

var testFuncRE = regexp.MustCompile(`(?m)^func (Test\w*)\(\s*\w+ \*testing\.T\s*\)`)

// Module reads the module path from dir/go.mod.
func Module(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("read go.mod: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("go.mod in %s has no module line", dir)
}

// Resolve finds the package that holds the test id in the module at dir.
func Resolve(dir, id string) (Target, error) {
	mod, err := Module(dir)
	if err != nil {
		return Target{}, err
	}
	pkgPath, test := split(id)
	if pkgPath != "" {
		rel := "."
		switch {
		case pkgPath == mod:
		case strings.HasPrefix(pkgPath, mod+"/"):
			rel = "./" + strings.TrimPrefix(pkgPath, mod+"/")
		default:
			return Target{}, fmt.Errorf("resolve %s: package %s is not in module %s: %w", id, pkgPath, mod, ErrNotFound)
		}
		return Target{ID: pkgPath + "." + test, ImportPath: pkgPath, Dir: rel, Test: test}, nil
	}
	fn, _, _ := strings.Cut(test, "/")
	dirs, err := findTestFunc(dir, fn)
	if err != nil {
		return Target{}, fmt.Errorf("resolve %s: %w", id, err)
	}
	switch len(dirs) {
	case 0:
		return Target{}, fmt.Errorf("resolve %s: no package of %s defines %s: %w", id, mod, fn, ErrNotFound)
	case 1:
	default:
		return Target{}, fmt.Errorf("resolve %s: defined in %s; name the package: %w", id, strings.Join(dirs, ", "), ErrAmbiguous)
	}
	rel := dirs[0]
	imp := mod
	if rel != "." {
		imp = mod + "/" + rel
		rel = "./" + rel
	}
	return Target{ID: imp + "." + test, ImportPath: imp, Dir: rel, Test: test}, nil
}

// split separates "import/path.TestX/sub" into its package and test; a bare
// "TestX/sub" has no package. The package ends at the first ".Test" whose
// function part (up to the first '/') is an identifier.
func split(id string) (pkg, test string) {
	if strings.HasPrefix(id, "Test") {
		return "", id
	}
	for off := 0; ; {
		i := strings.Index(id[off:], ".Test")
		if i < 0 {
			return "", id
		}
		i += off
		fn, _, _ := strings.Cut(id[i+1:], "/")
		if identRE.MatchString(fn) {
			return id[:i], id[i+1:]
		}
		off = i + 1
	}
}

var identRE = regexp.MustCompile(`^Test\w*$`)

func findTestFunc(root, fn string) ([]string, error) {
	var dirs []string
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFuncRE.FindAllSubmatch(data, -1) {
			if string(m[1]) == fn {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				rel = filepath.ToSlash(rel)
				if !seen[rel] {
					seen[rel] = true
					dirs = append(dirs, rel)
				}
			}
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
}

// RunPattern is the -run expression selecting exactly test (and its subtests).
func RunPattern(test string) string {
	parts := strings.Split(test, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// Runner runs go test.
type Runner struct {
	Timeout   time.Duration // per go test invocation
	MaxOutput int
}

// Outcome is what one run of some tests did.
type Outcome struct {
	Passed   []string       // canonical ids that passed
	Failed   []task.Failure // tests that failed
	Build    []task.Failure // packages that did not build
	Missing  []string       // asked-for ids that did not run
	Output   string         // go test's raw output, capped
	TimedOut bool
	Duration time.Duration
}

// OK reports that every asked-for test ran and passed.
func (o Outcome) OK() bool {
	return len(o.Failed) == 0 && len(o.Build) == 0 && len(o.Missing) == 0 && !o.TimedOut
}

// Summary is a short human line.
func (o Outcome) Summary() string {
	s := fmt.Sprintf("%d passed, %d failed", len(o.Passed), len(o.Failed))
	if len(o.Build) > 0 {
		s += fmt.Sprintf(", %d packages did not build", len(o.Build))
	}
	if len(o.Missing) > 0 {
		s += fmt.Sprintf(", %d did not run", len(o.Missing))
	}
	if o.TimedOut {
		s += ", timed out"
	}
	return s
}

// Run runs the tests ids in the module at dir, count times each.
func (r Runner) Run(ctx context.Context, dir string, ids []string, count int) (Outcome, error) {
	if count < 1 {
		count = 1
	}
	byDir := map[string][]Target{}
	var order []string
	for _, id := range ids {
		t, err := Resolve(dir, id)
		if err != nil {
			return Outcome{}, err
		}
		if _, ok := byDir[t.Dir]; !ok {
			order = append(order, t.Dir)
		}
		byDir[t.Dir] = append(byDir[t.Dir], t)
	}
	var all Outcome
	for _, d := range order {
		// -run takes one expression per subtest level, so tests of one
		// package are run one by one.
		for _, t := range byDir[d] {
			o, err := r.goTest(ctx, dir, []string{"-count", fmt.Sprint(count), "-run", RunPattern(t.Test), d})
			if err != nil {
				return Outcome{}, err
			}
			merge(&all, o)
			if !ran(o, t) {
				all.Missing = append(all.Missing, t.ID)
			}
		}
	}
	return all, nil
}

// RunPackages runs every test of the packages (relative dirs like "./x").
func (r Runner) RunPackages(ctx context.Context, dir string, pkgs []string) (Outcome, error) {
	args := append([]string{"-count", "1"}, pkgs...)
	return r.goTest(ctx, dir, args)
}

func ran(o Outcome, t Target) bool {
	for _, p := range o.Passed {
		if p == t.ID || strings.HasPrefix(p, t.ID+"/") {
			return true
		}
	}
	for _, f := range o.Failed {
		if id := f.ID(); id == t.ID || strings.HasPrefix(id, t.ID+"/") || strings.HasPrefix(t.ID, id+"/") {
			return true
		}
	}
	return len(o.Build) > 0 // a build failure ran nothing, and says so there
}

func merge(dst *Outcome, o Outcome) {
	dst.Passed = append(dst.Passed, o.Passed...)
	dst.Failed = append(dst.Failed, o.Failed...)
	dst.Build = append(dst.Build, o.Build...)
	dst.Output += o.Output
	dst.TimedOut = dst.TimedOut || o.TimedOut
	dst.Duration += o.Duration
}

func (r Runner) goTest(ctx context.Context, dir string, args []string) (Outcome, error) {
	cmd := append([]string{"go", "test", "-json"}, args...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: cmd, Timeout: r.Timeout, MaxOutput: r.MaxOutput})
	if err != nil {
		return Outcome{}, fmt.Errorf("go test in %s: %w", dir, err)
	}
	o := Outcome{Output: res.Output, TimedOut: res.TimedOut, Duration: res.Duration}
	if res.TimedOut {
		return o, nil
	}
	rep, perr := report.ParseGoTestJSON(strings.NewReader(res.Output))
	if perr != nil {
		if res.ExitCode != 0 {
			// go test printed no events: the build or the arguments failed.
			o.Build = append(o.Build, task.Failure{Test: "", Message: report.Message(res.Output), Output: res.Output, Frames: report.Frames(res.Output, 5)})
			return o, nil
		}
		return Outcome{}, fmt.Errorf("go test in %s: %w", dir, perr)
	}
	o.Passed = rep.Passed
	o.Failed = rep.Failures
	o.Build = rep.BuildErrors
	return o, nil
}
