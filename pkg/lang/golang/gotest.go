package golang

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Runner runs go test.
type Runner struct {
	Timeout time.Duration // per go test invocation
	// MaxOutput caps the text output kept in Outcome.Output. The test
	// results are read from the whole of go test's output regardless.
	MaxOutput int
	// Env ("NAME=value") and Args are the repository's test settings
	// (Driver.WithTests): every go test sees the variables, and takes the
	// options before its packages.
	Env, Args []string
}

// Run runs the tests ids in the module at dir, count times each. The tests
// of one package run in one go test process. A subtest runs inside its
// top-level test, with the siblings that come before it, exactly as in a
// full run, and its outcome is read from that run: a subtest that depends
// on state its siblings leave behaves as it does in CI. Names that no
// package defines do not stop the others: they are reported in Unknown.
func (r Runner) Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	if count < 1 {
		count = 1
	}
	byDir := map[string][]testrun.Target{}
	var order []string
	all := testrun.Outcome{Runs: map[string]report.Runs{}}
	for _, id := range ids {
		t, err := Resolve(dir, id)
		if err != nil {
			if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
				all.Missing = append(all.Missing, id)
				all.Unknown = append(all.Unknown, err.Error())
				continue
			}
			return testrun.Outcome{}, err
		}
		if _, ok := byDir[t.Dir]; !ok {
			order = append(order, t.Dir)
		}
		byDir[t.Dir] = append(byDir[t.Dir], t)
	}
	for _, d := range order {
		targets := byDir[d]
		var funcs []string
		whole := false // a package target asks for every test of its package
		for _, t := range targets {
			whole = whole || t.IsPackage()
			if !t.IsPackage() && !slices.Contains(funcs, t.Func()) {
				funcs = append(funcs, t.Func())
			}
		}
		args := []string{"-count", fmt.Sprint(count), "-run", funcsPattern(funcs), d}
		if whole {
			args = []string{"-count", fmt.Sprint(count), d}
		}
		o, res, err := r.goTest(ctx, dir, args)
		if err != nil {
			return testrun.Outcome{}, err
		}
		all.Invocations++
		all.Output += o.Output
		all.TimedOut = all.TimedOut || o.TimedOut
		all.Duration += o.Duration
		all.Build = append(all.Build, o.Build...)
		all.Incomplete = append(all.Incomplete, o.Incomplete...)
		asked := func(id string) bool {
			for _, t := range targets {
				if id == t.ID || strings.HasPrefix(id, t.ID+"/") || (t.IsPackage() && strings.HasPrefix(id, t.ImportPath+".")) {
					return true
				}
			}
			return false
		}
		for _, f := range o.Failed {
			if asked(f.ID()) {
				all.Failed = append(all.Failed, f)
			} else {
				all.Others = append(all.Others, f)
			}
		}
		for _, p := range o.Passed {
			if asked(p) {
				all.Passed = append(all.Passed, p)
			}
		}
		for _, n := range o.NotRun {
			if asked(n) {
				all.NotRun = append(all.NotRun, n)
			}
		}
		for id, runs := range res.Runs {
			if asked(id) {
				all.Runs[id] = runs
			}
		}
		for _, t := range targets {
			if t.IsPackage() {
				addPackage(&all, t, o, count)
				continue
			}
			if !ran(res, t) && len(o.Build) == 0 {
				all.Missing = append(all.Missing, t.ID)
			}
		}
	}
	return all, nil
}

// addPackage records a package target's result: it ran count times, and
// passed when the package built, none of its tests failed and the run ended
// in time.
func addPackage(all *testrun.Outcome, t testrun.Target, o testrun.Outcome, count int) {
	failed := o.TimedOut || len(o.Build) > 0 || slices.Contains(o.Incomplete, t.ImportPath)
	for _, f := range o.Failed {
		if f.Package == t.ImportPath {
			failed = true
		}
	}
	if failed {
		all.Runs[t.ID] = report.Runs{Fail: count}
		return
	}
	all.Runs[t.ID] = report.Runs{Pass: count}
	all.Passed = append(all.Passed, t.ID)
}

// funcsPattern is the -run expression selecting exactly the top-level tests
// funcs, with all their subtests.
func funcsPattern(funcs []string) string {
	quoted := make([]string, len(funcs))
	for i, f := range funcs {
		quoted[i] = regexp.QuoteMeta(f)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// RunPackages runs every test of the packages (relative dirs like "./x", or
// patterns like "./...").
func (r Runner) RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	args := append([]string{"-count", "1"}, pkgs...)
	o, _, err := r.goTest(ctx, dir, args)
	if err != nil {
		return testrun.Outcome{}, err
	}
	o.Invocations = 1
	return o, nil
}

// Build compiles the packages (relative dirs like "./x") and their tests,
// with go test's vet checks, running no test (go test -run '^$'): the
// packages that do not build are in Outcome.Build, with the compiler's
// messages.
func (r Runner) Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	args := append([]string{"-count", "1", "-run", "^$"}, pkgs...)
	o, _, err := r.goTest(ctx, dir, args)
	if err != nil {
		return testrun.Outcome{}, err
	}
	o.Invocations = 1
	return o, nil
}

// ran reports whether the test t has an outcome in the run: it, or one of
// its subtests, ended.
func ran(res report.Result, t testrun.Target) bool {
	for id, runs := range res.Runs {
		if (id == t.ID || strings.HasPrefix(id, t.ID+"/")) && runs.Pass+runs.Fail+runs.Skip > 0 {
			return true
		}
	}
	return false
}

// goTest runs go test -json with args. Its event stream comes back through
// a pipe and is parsed as it comes, whole: a run that prints megabytes is
// read to its end and never from a cut, and no file the tests could replace
// is read back.
func (r Runner) goTest(ctx context.Context, dir string, args []string) (testrun.Outcome, report.Result, error) {
	max := r.MaxOutput
	if max <= 0 {
		max = sandbox.DefaultMaxOutput
	}
	text := &report.Text{Head: max / 4, Tail: max * 3 / 4}
	pr, pw := io.Pipe()
	type parsed struct {
		rep report.Result
		err error
	}
	done := make(chan parsed, 1)
	go func() {
		rep, err := ParseGoTestStream(pr, text)
		// Whatever the parser left unread is drained, so that go test
		// never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, pr)
		done <- parsed{rep, err}
	}()
	cmd := append(append([]string{"go", "test", "-json"}, r.Args...), args...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: cmd, Env: r.Env, Timeout: r.Timeout, MaxOutput: r.MaxOutput, Stdout: pw})
	pw.Close()
	p := <-done
	if err != nil {
		return testrun.Outcome{}, report.Result{}, fmt.Errorf("go test in %s: %w", dir, err)
	}
	o := testrun.Outcome{TimedOut: res.TimedOut, Duration: res.Duration}
	rep, perr := p.rep, p.err
	o.Output = strings.TrimLeft(res.Output+text.String(), "\n")
	if perr != nil {
		if res.ExitCode != 0 || res.TimedOut {
			if res.TimedOut {
				return o, rep, nil
			}
			// go test printed no events: the build or the arguments failed.
			b := task.Failure{Output: o.Output}
			describeBuild(&b)
			o.Build = append(o.Build, b)
			return o, rep, nil
		}
		return testrun.Outcome{}, report.Result{}, fmt.Errorf("go test in %s: %w", dir, perr)
	}
	mod, _ := Module(dir)
	aliases := []string{}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		aliases = append(aliases, real)
	}
	rel := func(fs []task.Failure) []task.Failure {
		for i := range fs {
			report.Relativize(&fs[i], pkgDir(mod, fs[i].Package), dir, aliases...)
		}
		return fs
	}
	o.Passed = rep.Passed
	o.Failed = rel(rep.Failures)
	o.Build = rel(rep.BuildErrors)
	o.NotRun = rep.NotRun
	o.Incomplete = rep.Incomplete
	o.Runs = rep.Runs
	return o, rep, nil
}

// pkgDir is the directory of the package imp in module mod, relative to the
// module root ("." for the root package).
func pkgDir(mod, imp string) string {
	switch {
	case mod == "" || imp == mod:
		return "."
	case strings.HasPrefix(imp, mod+"/"):
		return strings.TrimPrefix(imp, mod+"/")
	}
	return "."
}

// List lists the top-level tests of the packages (relative dirs like "./x",
// or patterns like "./...") with go test -list. Subtests are only known by
// running their parent. A package that does not build is an error that
// carries the compiler's output.
func (r Runner) List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error) {
	args := append(append([]string{"go", "test", "-list", "^Test"}, r.Args...), pkgs...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: args, Env: r.Env, Timeout: r.Timeout, MaxOutput: r.MaxOutput})
	if err != nil {
		return nil, fmt.Errorf("list the tests of %s: %w", strings.Join(pkgs, " "), err)
	}
	if res.TimedOut {
		return nil, fmt.Errorf("list the tests of %s: timed out", strings.Join(pkgs, " "))
	}
	var out []testrun.Listed
	var names []string
	for _, line := range strings.Split(res.Output, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && identRE.MatchString(f[0]):
			names = append(names, f[0])
		case len(f) >= 2 && (f[0] == "ok" || f[0] == "?"):
			out = append(out, testrun.Listed{ImportPath: f[1], Tests: names})
			names = nil
		}
	}
	if !res.OK() {
		return out, fmt.Errorf("list the tests of %s: %s", strings.Join(pkgs, " "), strings.TrimSpace(res.Output))
	}
	return out, nil
}
