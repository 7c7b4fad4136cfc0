package toylang

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Resolve names a test PACKAGE.NAME (a bare NAME where one package's tests
// hold it) or a package: the package must be a directory of the checkout
// whose tests declare the name.
func (d Driver) Resolve(dir, id string) (testrun.Target, error) {
	pkg, name := "", id
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		pkg, name = id[:i], id[i+1:]
	}
	if pkg == "" {
		if fi, err := untrusted.Lstat(dir, id); err == nil && fi.IsDir() {
			return testrun.Target{ID: id, ImportPath: id, Dir: id}, nil
		}
		var found []string
		for p, tests := range d.tests(dir, ".") {
			for _, t := range tests {
				if t.name == name {
					found = append(found, p)
				}
			}
		}
		switch len(found) {
		case 0:
			return testrun.Target{}, fmt.Errorf("resolve %s: no toy test: %w", id, testrun.ErrNotFound)
		case 1:
			pkg = path.Dir(found[0])
		default:
			return testrun.Target{}, fmt.Errorf("resolve %s: in %s: %w", id, strings.Join(found, ", "), testrun.ErrAmbiguous)
		}
	}
	for _, tests := range d.tests(dir, pkg) {
		for _, t := range tests {
			if t.name == name {
				return testrun.Target{ID: pkg + "." + name, ImportPath: pkg, Dir: pkg, Test: name}, nil
			}
		}
	}
	return testrun.Target{}, fmt.Errorf("resolve %s: no test %s in %s: %w", id, name, pkg, testrun.ErrNotFound)
}

// tests are the tests of the test files in the package (a directory, its
// test files directly in it; "." with every test file of the checkout; or
// one test file), by file.
func (d Driver) tests(dir, pkg string) map[string][]test {
	out := map[string][]test{}
	for _, rel := range d.walk(dir) {
		keep := path.Dir(rel) == pkg || pkg == "." || rel == pkg
		if keep && strings.HasSuffix(rel, "_test.toy") {
			if src, err := untrusted.ReadText(dir, rel, maxFile); err == nil {
				out[rel] = parseFile(rel, src).tests
			}
		}
	}
	return out
}

// walk lists the checkout's .toy files but test data.
func (d Driver) walk(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() && p != dir && (e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".")) {
			return filepath.SkipDir
		}
		if rel := untrusted.Rel(dir, p); e.Type().IsRegular() && d.IsSource(rel) {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// program is the checkout's code: its definitions and cases by name.
type program struct {
	defs  map[string]def
	cases map[string][]def
}

func (d Driver) program(dir string) program {
	p := program{defs: map[string]def{}, cases: map[string][]def{}}
	for _, rel := range d.walk(dir) {
		if strings.HasSuffix(rel, "_test.toy") {
			continue
		}
		src, err := untrusted.ReadText(dir, rel, maxFile)
		if err != nil {
			continue
		}
		for _, df := range parseFile(rel, src).defs {
			if df.isCase {
				p.cases[df.name] = append(p.cases[df.name], df)
			} else {
				p.defs[df.name] = df
			}
		}
	}
	return p
}

// call evaluates fn on args; testing is 1 under test.
func (p program) call(fn string, args []int, testing bool) (int, error) {
	for _, c := range p.cases[fn] {
		if len(c.params) == len(args) && sameArgs(c.params, args) {
			return strconv.Atoi(c.expr[0])
		}
	}
	df, ok := p.defs[fn]
	if !ok {
		return 0, fmt.Errorf("no function %s", fn)
	}
	if len(df.params) != len(args) {
		return 0, fmt.Errorf("%s takes %d arguments, not %d", fn, len(df.params), len(args))
	}
	env := map[string]int{}
	for i, name := range df.params {
		env[name] = args[i]
	}
	if testing {
		env["testing"] = 1
	}
	value := func(tok string) (int, error) {
		if v, ok := env[tok]; ok || tok == "testing" {
			return v, nil
		}
		return strconv.Atoi(tok)
	}
	acc, err := value(df.expr[0])
	for i := 1; err == nil && i+1 < len(df.expr); i += 2 {
		var v int
		if v, err = value(df.expr[i+1]); err == nil {
			switch df.expr[i] {
			case "+":
				acc += v
			case "-":
				acc -= v
			case "*":
				acc *= v
			default:
				err = fmt.Errorf("no operator %s", df.expr[i])
			}
		}
	}
	return acc, err
}

func sameArgs(params []string, args []int) bool {
	for i, p := range params {
		if p != strconv.Itoa(args[i]) {
			return false
		}
	}
	return true
}

// Run runs the tests count times each, in the driver.
func (d Driver) Run(_ context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	start := time.Now()
	o := testrun.Outcome{Runs: map[string]report.Runs{}, Invocations: 1}
	var targets []testrun.Target
	for _, id := range ids {
		t, err := d.Resolve(dir, id)
		if err != nil {
			o.Missing, o.Unknown = append(o.Missing, id), append(o.Unknown, err.Error())
			continue
		}
		targets = append(targets, t)
	}
	d.runTargets(dir, targets, max(count, 1), &o)
	o.Duration = time.Since(start)
	return o, nil
}

// RunPackages runs every test of the packages (directories or test files).
func (d Driver) RunPackages(_ context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	start := time.Now()
	o := testrun.Outcome{Runs: map[string]report.Runs{}, Invocations: 1}
	var targets []testrun.Target
	for _, pkg := range pkgs {
		for file, tests := range d.tests(dir, pkg) {
			for _, t := range tests {
				p := path.Dir(file)
				targets = append(targets, testrun.Target{ID: p + "." + t.name, ImportPath: p, Dir: p, Test: t.name})
			}
		}
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].ID < targets[j].ID })
	d.runTargets(dir, targets, 1, &o)
	o.Duration = time.Since(start)
	return o, nil
}

// runTargets runs the tests (a package alone runs all of its), recording
// their outcomes in o.
func (d Driver) runTargets(dir string, targets []testrun.Target, count int, o *testrun.Outcome) {
	prog := d.program(dir)
	for _, t := range targets {
		for file, tests := range d.tests(dir, t.ImportPath) {
			for _, tt := range tests {
				if t.Test != "" && tt.name != t.Test {
					continue
				}
				id := path.Dir(file) + "." + tt.name
				if tt.skip {
					o.Runs[id] = report.Runs{Skip: count}
					continue
				}
				if f, bad := runTest(prog, file, tt); bad {
					f.Package, f.Test = path.Dir(file), tt.name
					o.Failed = append(o.Failed, f)
					o.Runs[id] = report.Runs{Fail: count}
					continue
				}
				o.Passed = append(o.Passed, id)
				o.Runs[id] = report.Runs{Pass: count}
			}
		}
	}
	o.Output = fmt.Sprintf("%d passed, %d failed", len(o.Passed), len(o.Failed))
}

// runTest runs a test's expectations: the first that does not hold fails
// it, saying what the call gave and where.
func runTest(prog program, file string, t test) (task.Failure, bool) {
	for _, e := range t.expects {
		got, err := prog.call(e.fn, e.args, true)
		msg := ""
		switch {
		case err != nil:
			msg = err.Error()
		case got != e.want:
			msg = fmt.Sprintf("%s = %d, want %d", strings.TrimSpace(strings.SplitN(strings.TrimPrefix(e.text, "expect"), "=", 2)[0]), got, e.want)
		default:
			continue
		}
		return task.Failure{Message: msg, Frames: []string{fmt.Sprintf("%s:%d", file, e.line)}, Output: e.text}, true
	}
	return task.Failure{}, false
}

// Build reads the packages' test files and the checkout's code: a line
// either does not read fails the build of its package.
func (d Driver) Build(_ context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	var o testrun.Outcome
	for _, rel := range d.walk(dir) {
		src, err := untrusted.ReadText(dir, rel, maxFile)
		if err != nil {
			continue
		}
		for _, e := range parseFile(rel, src).errs {
			o.Build = append(o.Build, task.Failure{Package: path.Dir(rel), Message: fmt.Sprintf("%s:%d: %s", rel, e.line, e.msg)})
		}
	}
	return o, nil
}

// List lists the packages' tests, one Listed per package, in order.
func (d Driver) List(_ context.Context, dir string, pkgs []string) ([]testrun.Listed, error) {
	byPkg := map[string][]string{}
	for _, pkg := range pkgs {
		for file, tests := range d.tests(dir, pkg) {
			for _, t := range tests {
				byPkg[path.Dir(file)] = append(byPkg[path.Dir(file)], t.name)
			}
		}
	}
	var out []testrun.Listed
	for pkg, names := range byPkg {
		out = append(out, testrun.Listed{ImportPath: pkg, Tests: names})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ImportPath < out[j].ImportPath })
	return out, nil
}
