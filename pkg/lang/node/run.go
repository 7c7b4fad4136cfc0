package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Run runs the tests ids (resolved first: canonical ids, files,
// directories, the runners' report dialects, bare titles) count times
// each, one runner process a time: the runners have no count of their
// own that repeats a test in one process as CI ran it, so the process
// runs count times and the runs are added up in Outcome.Runs. The tests
// are picked by their files and an anchored name pattern (vitest's and
// jest's --testNamePattern, mocha's --grep, node's --test-name-pattern).
// Names that resolve to nothing, and tests their file does not have, are
// in Missing (the first with the reason in Unknown); a test file that
// does not load (a syntax error, a module not found, a transform that
// fails) is in Build, and the other files' tests still run.
//
// The asked ids have their own entry in Runs: a test's; a describe
// block's, a file's or a directory's adds up its tests' (failed when one
// failed). A failing test not under any asked id is in Others.
func (d Driver) Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	if count < 1 {
		count = 1
	}
	dir, r, targets, all, err := d.targets(dir, ids)
	if err != nil || len(targets) == 0 {
		return all, err
	}
	return d.run(ctx, dir, r, targets, count, true, all)
}

// RunPackages runs every test of the packages: test files, directories
// ("test", "src", "." for the whole checkout), or anything else Run
// resolves. The outcome names the tests that ran; a package that is not
// there is in Missing.
func (d Driver) RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	dir, r, targets, all, err := d.targets(dir, pkgs)
	if err != nil || len(targets) == 0 {
		return all, err
	}
	return d.run(ctx, dir, r, targets, 1, false, all)
}

// targets resolves ids; those that resolve to nothing are in Missing.
func (d Driver) targets(dir string, ids []string) (string, *resolver, []testrun.Target, testrun.Outcome, error) {
	all := testrun.Outcome{Runs: map[string]report.Runs{}}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, nil, all, err
	}
	r := newResolver(abs)
	var targets []testrun.Target
	seen := map[string]bool{}
	for _, id := range ids {
		t, err := r.resolve(strings.TrimPrefix(id, "./"))
		if err != nil {
			if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
				all.Missing = append(all.Missing, id)
				all.Unknown = append(all.Unknown, err.Error())
				continue
			}
			return "", nil, nil, all, err
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			targets = append(targets, t)
		}
	}
	return abs, r, targets, all, nil
}

// invocation is one runner process and the report it left.
type invocation struct {
	res     sandbox.Result
	rs      results
	readErr error // why no report was read
}

// output is the runner's output, with a line saying why no report was
// read.
func (inv invocation) output() string {
	out := inv.res.Output
	if inv.readErr != nil && !inv.res.TimedOut {
		out = strings.TrimRight(out, "\n") + "\n[redfix: no report read from this run: " + inv.readErr.Error() + "]\n"
	}
	return out
}

// invoke runs the runner once on targets and reads its report.
func (d Driver) invoke(ctx context.Context, s *session, runner, name string, targets []testrun.Target, collect bool) (invocation, error) {
	args, env, err := s.command(runner, name, targets, collect)
	if err != nil {
		return invocation{}, err
	}
	res, err := s.run(ctx, runner, d.Timeout, args, env...)
	if err != nil {
		return invocation{}, err
	}
	inv := invocation{res: res}
	data, err := s.readOutbox(reportName(name), maxReportBytes)
	if err == nil {
		inv.rs, err = parseReport(data, s.dir, aliasesOf(s.dir))
	}
	inv.readErr = err
	return inv, nil
}

// run runs targets count times and adds up what the runs did (see Run).
// own gives each target its own entry in Runs and Passed.
func (d Driver) run(ctx context.Context, dir string, r *resolver, targets []testrun.Target, count int, own bool, all testrun.Outcome) (testrun.Outcome, error) {
	s, err := d.session(ctx, dir)
	if err != nil {
		return testrun.Outcome{}, err
	}
	defer s.done()
	runner := runnerOf(dir)
	s.titles = titlesOf(r)
	asked := targets
	if runner == nodeTest {
		asked = suitesAsFiles(r, targets)
	}
	var runs []results
	var timedOut []bool
	for i := 0; i < count; i++ {
		inv, err := d.invoke(ctx, s, runner, fmt.Sprint("run-", i), asked, false)
		if err != nil {
			return testrun.Outcome{}, err
		}
		all.Invocations++
		all.Output += inv.output()
		all.Duration += inv.res.Duration
		all.TimedOut = all.TimedOut || inv.res.TimedOut
		rs := inv.rs
		if inv.readErr != nil && !inv.res.TimedOut {
			// The runner stopped before its report: its configuration, or
			// a file it loads before any test (mocha loads every file
			// first), does not load.
			rs.build = append(rs.build, runnerFailed(targets, inv.res.Output, dir)...)
		}
		runs = append(runs, rs)
		timedOut = append(timedOut, inv.res.TimedOut)
	}
	return finish(all, targets, runs, timedOut, own), nil
}

// pathRE is an absolute path of a source file and a line in a runner's
// output: "/abs/test/x.test.js:2".
var pathRE = regexp.MustCompile(`(/[^\s:'"()]+\.(?:js|jsx|mjs|cjs|ts|tsx|mts|cts)):\d+`)

// runnerFailed says, for each target's file or directory, that the runner
// could not run its tests, with the runner's own words.
//
// When the output names some of the targets' files (a file mocha could not
// load), only those are said not to load.
func runnerFailed(targets []testrun.Target, output, dir string) []task.Failure {
	var out []task.Failure
	seen := map[string]bool{}
	aliases := aliasesOf(dir)
	var named []string
	for _, root := range append([]string{dir}, aliases...) {
		for _, m := range pathRE.FindAllStringSubmatch(output, -1) {
			rel, ok := strings.CutPrefix(m[1], root+"/")
			if ok && !seen[rel] && (Driver{}).IsTestFile(rel) && hasTarget(targets, rel+"::") {
				seen[rel] = true
				named = append(named, rel)
			}
		}
	}
	if len(named) == 0 {
		for _, t := range targets {
			if !seen[t.ImportPath] {
				seen[t.ImportPath] = true
				named = append(named, t.ImportPath)
			}
		}
	}
	for _, p := range named {
		f := task.Failure{Package: p, Output: output}
		describeBuild(&f, dir, aliases)
		out = append(out, f)
	}
	return out
}

// suitesAsFiles is targets with those that name a describe block (a
// start of declared tests' names, not a test) asked as their whole file:
// node:test's name pattern matches each test's own title, and a describe
// block's name would not select its tests.
func suitesAsFiles(r *resolver, targets []testrun.Target) []testrun.Target {
	tests, err := r.declaredAll()
	if err != nil {
		return targets
	}
	out := make([]testrun.Target, 0, len(targets))
	for _, t := range targets {
		suite := false
		if !t.IsPackage() {
			for _, ft := range tests {
				if ft.file != t.ImportPath {
					continue
				}
				if ft.t.name() == t.Test {
					suite = false
					break
				}
				suite = suite || strings.HasPrefix(ft.t.name(), t.Test+" > ")
			}
		}
		if suite {
			t = fileTarget(t.ImportPath)
		}
		out = append(out, t)
	}
	return out
}
