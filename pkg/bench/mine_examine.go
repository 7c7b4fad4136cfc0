package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/workspace"
)

// examine runs a candidate's tests with the fix and without it.
func examine(ctx context.Context, o MineOptions, l Language, ws *workspace.Workspace, c commit, repo string) (Task, *skipped, error) {
	var testFiles, codeFiles []string
	for _, f := range c.files {
		if l.IsTestFile(f.path) {
			testFiles = append(testFiles, f.path)
		} else {
			codeFiles = append(codeFiles, f.path)
		}
	}
	passing, skip, err := withTheFix(ctx, o, l, ws, c, testFiles)
	if err != nil || skip != nil {
		return Task{}, skip, err
	}
	failing, skip, err := withoutTheFix(ctx, o, l, ws, c, testFiles, passing)
	if err != nil || skip != nil {
		return Task{}, skip, err
	}
	pkgs, known, err := otherFailures(ctx, o, l, ws, c, failing)
	if err != nil {
		return Task{}, nil, err
	}
	r := ws.Repo
	testPatch, err := r.Git(ctx, append([]string{"diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames", c.parent, c.sha, "--"}, testFiles...)...)
	if err != nil {
		return Task{}, nil, err
	}
	golden, err := r.Git(ctx, append([]string{"diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames", c.parent, c.sha, "--"}, codeFiles...)...)
	if err != nil {
		return Task{}, nil, err
	}
	lines := 0
	for _, f := range c.files {
		if !l.IsTestFile(f.path) {
			lines += f.added + f.removed
		}
	}
	return Task{
		ID: taskID(repo, c.sha), Repo: repo, Base: c.parent, TestPatch: testPatch, Tests: failing,
		Packages: pkgs, KnownFailures: known, Golden: golden, LinesChanged: lines, Fix: c.sha, Subject: c.subject,
	}, nil, nil
}

// withTheFix runs the fix's tests (those of its test files) at the fix:
// the ids that pass steadily there, or why the commit is skipped.
func withTheFix(ctx context.Context, o MineOptions, l Language, ws *workspace.Workspace, c commit, testFiles []string) ([]string, *skipped, error) {
	o.Progress.Step(task.Short(c.sha) + " with the fix")
	if err := ws.Repo.Checkout(ctx, c.sha); err != nil {
		return nil, nil, err
	}
	if err := l.Setup(ctx, ws.Dir); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, setupSkip(l, "", err), nil
	}
	ids, skip, err := fixTests(ctx, l, ws.Dir, testFiles)
	if err != nil || skip != nil {
		return nil, skip, err
	}
	withFix, err := runs(ctx, o, l, ws.Dir, ids)
	if err != nil {
		return nil, nil, err
	}
	if skip := envSkip(l, withFix, "with the fix"); skip != nil {
		return nil, skip, nil
	}
	if len(withFix.Build) > 0 {
		return nil, skipf(SkipBuild, "%s", firstLine(withFix.Build[0].Message, withFix.Build[0].Output)), nil
	}
	if needsNetwork(l, failureText(withFix)) {
		return nil, skipf(SkipNetwork, "a test reaches for the network with the fix"), nil
	}
	passing, flakyFix := steady(withFix, ids, true, o.SteadyRuns())
	if len(passing) == 0 {
		if len(flakyFix) > 0 {
			return nil, skipf(SkipFlaky, "with the fix %s", strings.Join(flakyFix, "; ")), nil
		}
		return nil, skipf(SkipFailFix, "no test of the changed test files passes with the fix"), nil
	}
	return passing, nil, nil
}

// withoutTheFix runs the passing tests against the code before the fix
// (its parent with the fix's test files): those that fail steadily there,
// or why the commit is skipped.
func withoutTheFix(ctx context.Context, o MineOptions, l Language, ws *workspace.Workspace, c commit, testFiles, passing []string) ([]string, *skipped, error) {
	o.Progress.Step(task.Short(c.sha) + " without the fix")
	r := ws.Repo
	if err := r.Checkout(ctx, c.parent); err != nil {
		return nil, nil, err
	}
	if err := takeFiles(ctx, r, c.sha, testFiles); err != nil {
		return nil, nil, err
	}
	// The old code may declare other dependencies.
	if err := l.Setup(ctx, ws.Dir); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, setupSkip(l, "without the fix: ", err), nil
	}
	without, err := runs(ctx, o, l, ws.Dir, passing)
	if err != nil {
		return nil, nil, err
	}
	if skip := envSkip(l, without, "without the fix"); skip != nil {
		return nil, skip, nil
	}
	if needsNetwork(l, failureText(without)) {
		return nil, skipf(SkipNetwork, "a test reaches for the network without the fix"), nil
	}
	if len(without.Build) > 0 {
		return nil, skipf(SkipTestsBuild, "the fix's tests do not build against the old code: %s", firstLine(without.Build[0].Message, without.Build[0].Output)), nil
	}
	failing, flaky := steady(without, passing, false, o.SteadyRuns())
	if len(failing) == 0 {
		if len(flaky) > 0 {
			return nil, skipf(SkipFlaky, "without the fix %s", strings.Join(flaky, "; ")), nil
		}
		return nil, skipf(SkipPassOld, "the fix's tests pass with the old code too"), nil
	}
	if len(flaky) > 0 {
		o.Log.Info("flaky tests left out of a task", zap.String("commit", c.sha), zap.Strings("flaky", flaky))
	}
	return failing, nil, nil
}

// otherFailures runs the other tests of the failing tests' packages with
// the fix: those that fail there (known) are no patch's fault.
func otherFailures(ctx context.Context, o MineOptions, l Language, ws *workspace.Workspace, c commit, failing []string) (pkgs, known []string, err error) {
	o.Progress.Step(task.Short(c.sha) + " the packages' other tests")
	if err := ws.Repo.Checkout(ctx, c.sha); err != nil {
		return nil, nil, err
	}
	var dirs []string
	for _, id := range failing {
		t, err := l.Resolve(ws.Dir, id)
		if err != nil {
			return nil, nil, err
		}
		if !slices.Contains(pkgs, t.ImportPath) {
			pkgs, dirs = append(pkgs, t.ImportPath), append(dirs, packageDir(l, t))
		}
	}
	all, err := l.RunPackages(ctx, ws.Dir, dirs)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range all.Failed {
		if id := f.ID(); !slices.Contains(failing, id) && !slices.Contains(known, id) {
			known = append(known, id)
		}
	}
	return pkgs, known, nil
}

// runs runs the tests o.Runs times, each in a test process of its own as
// CI runs them (a test that leaves global state behind is not flaky for
// failing a second run in the same process), then runs again those that
// gave the same outcome every time until they have done so SteadyRuns
// times, and adds up their outcomes. It stops at the first run that does
// not build.
func runs(ctx context.Context, o MineOptions, l Language, dir string, ids []string) (testrun.Outcome, error) {
	var all testrun.Outcome
	all.Runs = map[string]report.Runs{}
	todo := ids
	for i := 0; len(todo) > 0 && i < max(o.Runs, o.SteadyRuns()); i++ {
		out, err := l.Run(ctx, dir, todo, 1)
		if err != nil {
			return all, err
		}
		add(&all, out)
		if len(out.Build) > 0 {
			break
		}
		// A test that another test's panic stopped (it never ended, or
		// never started) says nothing of its own: on its own it does.
		for _, id := range todo {
			if r := out.Runs[id]; r.Pass+r.Fail > 0 || out.TimedOut {
				continue
			}
			alone, err := l.Run(ctx, dir, []string{id}, 1)
			if err != nil {
				return all, err
			}
			add(&all, alone)
		}
		if i+1 >= o.Runs {
			todo = slices.DeleteFunc(slices.Clone(todo), func(id string) bool {
				r := all.Runs[id]
				return r.Pass+r.Fail == 0 || r.Pass > 0 && r.Fail > 0
			})
		}
	}
	return all, nil
}

// add adds a run's outcome to all's.
func add(all *testrun.Outcome, out testrun.Outcome) {
	all.Failed = append(all.Failed, out.Failed...)
	all.Build = append(all.Build, out.Build...)
	all.Others = append(all.Others, out.Others...)
	all.TimedOut = all.TimedOut || out.TimedOut
	for id, r := range out.Runs {
		t := all.Runs[id]
		t.Pass, t.Fail, t.Skip = t.Pass+r.Pass, t.Fail+r.Fail, t.Skip+r.Skip
		all.Runs[id] = t
	}
}

// Defaults of MineOptions' error rate: a test failing half of its runs is
// taken for steady once in a thousand mines at most.
const (
	DefaultFlakeRate  = 0.5
	DefaultFlakeError = 0.001
)

// SteadyRuns is how many runs in a row with one outcome make a test
// steady: the fewest n with (1-FlakeRate)^n <= FlakeError, and at least
// Runs (10 with the defaults).
func (o MineOptions) SteadyRuns() int {
	rate, e := o.FlakeRate, o.FlakeError
	if rate <= 0 || rate >= 1 {
		rate = DefaultFlakeRate
	}
	if e <= 0 || e >= 1 {
		e = DefaultFlakeError
	}
	n := int(math.Ceil(math.Log(e)/math.Log(1-rate) - 1e-9))
	return max(n, o.Runs)
}

// steady splits ids by their runs in out: those that passed (pass true) or
// failed in each of need runs, and, worded, those that did both.
func steady(out testrun.Outcome, ids []string, pass bool, need int) (same, flaky []string) {
	for _, id := range ids {
		r := out.Runs[id]
		good, bad := r.Pass, r.Fail
		if !pass {
			good, bad = bad, good
		}
		switch {
		case good >= need && bad == 0:
			same = append(same, id)
		case r.Pass > 0 && r.Fail > 0:
			flaky = append(flaky, fmt.Sprintf("%s failed %d of %d runs", id, r.Fail, r.Pass+r.Fail))
		}
	}
	return same, flaky
}

// takeFiles makes paths in the work tree as they are at rev: written, or
// removed where rev has no such file.
func takeFiles(ctx context.Context, r gitrepo.Repo, rev string, paths []string) error {
	out, err := r.Git(ctx, append([]string{"ls-tree", "-r", "--name-only", rev, "--"}, paths...)...)
	if err != nil {
		return err
	}
	present := strings.Fields(out)
	var take []string
	for _, p := range paths {
		if slices.Contains(present, p) {
			take = append(take, p)
		} else if err := os.Remove(filepath.Join(r.Dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if len(take) == 0 {
		return nil
	}
	_, err = r.Git(ctx, append([]string{"checkout", rev, "--"}, take...)...)
	return err
}

// fixTests are the tests that a fix's changed test files define, checked
// out at root: what the driver reads from the files when it can
// (FileTests: Go's go/parser, where listing would build whole packages),
// else what it collects from the files.
func fixTests(ctx context.Context, l Language, root string, testFiles []string) ([]string, *skipped, error) {
	if ft, ok := l.(FileTests); ok {
		ids, err := ft.TestsInFiles(root, testFiles)
		if err != nil {
			return nil, skipf(SkipBuild, "%v", err), nil
		}
		if len(ids) == 0 {
			return nil, skipf(SkipNoTests, "the changed test files define no test function"), nil
		}
		return ids, nil, nil
	}
	var sources []string
	for _, f := range testFiles {
		if isTestSource(l, f) {
			if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err == nil && fi.Mode().IsRegular() {
				sources = append(sources, f) // not deleted by the fix
			}
		}
	}
	ids, why, err := listedTests(ctx, l, root, sources)
	if err != nil {
		return nil, nil, err
	}
	if len(ids) == 0 {
		if why != "" {
			return nil, skipf(SkipBuild, "%s", why), nil
		}
		return nil, skipf(SkipNoTests, "the changed test files define no test"), nil
	}
	return ids, nil, nil
}

// packageDir is what RunPackages takes for a target's package: what the
// driver says (PackageDirs: Go's directory, "./x"), else the package as
// the driver names it (a Python test file).
func packageDir(l Language, t testrun.Target) string {
	if pd, ok := l.(PackageDirs); ok {
		return pd.TargetPackage(t)
	}
	return t.ImportPath
}

// failureText is every failure's output in a run.
func failureText(o testrun.Outcome) string {
	var b strings.Builder
	for _, fs := range [][]task.Failure{o.Failed, o.Build, o.Others} {
		for _, f := range fs {
			b.WriteString(f.Message)
			b.WriteString("\n")
			b.WriteString(f.Output)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// firstLine is the first non-empty line of the first non-empty text.
func firstLine(texts ...string) string {
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				if r := []rune(l); len(r) > 200 {
					l = string(r[:200]) + "…"
				}
				return l
			}
		}
	}
	return "(no output)"
}

// setupSkip is the skip of a failed setup: for a driver whose setup only
// fetches (FetchingSetup: Go's module versions), one the environment
// caused (SkipModules), tried again by the next run.
func setupSkip(l Language, when string, err error) *skipped {
	if _, ok := l.(FetchingSetup); ok {
		return skipf(SkipModules, "%s%s", when, setupReason(err))
	}
	return skipf(SkipSetup, "%s%s", when, setupReason(err))
}

// envSkip is the skip of a run the environment spoiled (a time limit
// reached, a dependency the setup did not fetch), nil for none.
func envSkip(l Language, out testrun.Outcome, when string) *skipped {
	if out.TimedOut {
		return skipf(SkipTimeout, "%s the tests reached their time limit", when)
	}
	if fs, ok := l.(FetchingSetup); ok {
		for _, b := range out.Build {
			for _, line := range strings.Split(b.Message+"\n"+b.Output, "\n") {
				if fs.UnfetchedDependency(line) {
					return skipf(SkipModules, "%s: %s", when, oneLine(line, 300))
				}
			}
		}
	}
	return nil
}

// setupReason is a failed setup in a line: its first line (the command)
// and the line of its output that says why (the first that says ERROR, else
// the last).
func setupReason(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	why := ""
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" && (why == "" || !strings.Contains(why, "ERROR")) {
			why = l
		}
	}
	if why == "" {
		return oneLine(lines[0], 600)
	}
	return oneLine(lines[0], 300) + " … " + oneLine(why, 300)
}
