package python

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Run runs the tests ids (resolved first: node ids, files, directories,
// the JUnit dialect, bare names) count times each, in one pytest process a
// time: pytest has no -count, so it runs count times and the runs are
// added up in Outcome.Runs. Names that resolve to nothing, and ids pytest
// does not collect, are in Missing with the reason in Unknown; they do not
// stop the others. A file that does not collect (a syntax error, an import
// that fails) is in Build; the tests of other files still run.
//
// The asked ids have their own entry in Runs: a test's; a parametrized
// function's, a class's or a file's adds up its tests' (failed when one
// failed). The tests that ran under an asked id are reported by their own
// node ids too; a failing one not under any asked id is in Others.
func (d Driver) Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	if count < 1 {
		count = 1
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return testrun.Outcome{}, err
	}
	r := newResolver(dir)
	all := testrun.Outcome{Runs: map[string]report.Runs{}}
	var targets []testrun.Target
	seen := map[string]bool{}
	for _, id := range ids {
		t, err := r.resolve(id)
		if err != nil {
			if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
				all.Missing = append(all.Missing, id)
				all.Unknown = append(all.Unknown, err.Error())
				continue
			}
			return testrun.Outcome{}, err
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return all, nil
	}
	return d.run(ctx, dir, r, targets, count, true, all)
}

// RunPackages runs every test of the packages: test files, directories
// ("tests", "pkg/sub", "." for the whole checkout), or anything else Run
// resolves. The outcome names the tests that ran; a package that is not
// there is in Missing.
func (d Driver) RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	dir, r, targets, all, err := d.packages(dir, pkgs)
	if err != nil || len(targets) == 0 {
		return all, err
	}
	return d.run(ctx, dir, r, targets, 1, false, all)
}

// packages resolves packages as RunPackages, Build and List take them.
func (d Driver) packages(dir string, pkgs []string) (string, *resolver, []testrun.Target, testrun.Outcome, error) {
	all := testrun.Outcome{Runs: map[string]report.Runs{}}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, nil, all, err
	}
	r := newResolver(abs)
	var targets []testrun.Target
	seen := map[string]bool{}
	for _, p := range pkgs {
		t, err := r.resolve(strings.TrimPrefix(p, "./"))
		if err != nil {
			if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
				all.Missing = append(all.Missing, p)
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

// Build collects the packages' tests without running one: the files that
// do not collect (a syntax error, a failing import, a conftest.py that
// fails) are in Build, with pytest's report of them.
func (d Driver) Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	dir, r, targets, all, err := d.packages(dir, pkgs)
	if err != nil || len(targets) == 0 {
		return all, err
	}
	env, outbox, done, err := d.session(ctx, dir)
	if err != nil {
		return testrun.Outcome{}, err
	}
	defer done()
	c, err := d.collect(ctx, env, dir, outbox, r, argsOf(targets), "build")
	if err != nil {
		return testrun.Outcome{}, err
	}
	all.Invocations = 1
	all.Output = c.inv.output()
	all.Duration, all.TimedOut = c.inv.res.Duration, c.inv.res.TimedOut
	all.Build = c.res.build
	if c.broken {
		all.Build = append(all.Build, pytestFailed(targets, c.inv.res.Output, dir)...)
	}
	return all, nil
}

// suiteName is the JUnit suite's name. ParseJUnit names a test case's
// package after its suite when the case has no classname (a collection
// error's) or one equal to its name (test_x in test_x.py, as jest-junit
// writes every test): a name no module path can be tells those apart.
const suiteName = "redfix-pytest"

// run runs targets count times and adds up what the runs did (see Run).
// own gives each target its own entry in Runs and Passed.
func (d Driver) run(ctx context.Context, dir string, r *resolver, targets []testrun.Target, count int, own bool, all testrun.Outcome) (testrun.Outcome, error) {
	env, outbox, done, err := d.session(ctx, dir)
	if err != nil {
		return testrun.Outcome{}, err
	}
	defer done()
	args := argsOf(targets)
	var runs []results
	var timedOut []bool
	refined := false
	for i := 0; i < count; i++ {
		inv, err := d.pytest(ctx, env, dir, outbox, fmt.Sprint(i), nil, []string{"--continue-on-collection-errors"}, args)
		if err != nil {
			return testrun.Outcome{}, err
		}
		all.Invocations++
		all.Output += inv.output()
		all.Duration += inv.res.Duration
		all.TimedOut = all.TimedOut || inv.res.TimedOut
		rs := r.results(inv)
		ran := len(rs.passed)+len(rs.failed)+len(rs.skipped) > 0
		if !refined && inv.res.ExitCode == exitUsage && !ran {
			// One id pytest does not collect stops the whole run (and so
			// does an id in a file that does not collect): find out which,
			// and run the others.
			refined = true
			known, unknown, why, c, err := d.known(ctx, env, dir, outbox, r, targets)
			if err != nil {
				return testrun.Outcome{}, err
			}
			all.Invocations++
			all.Duration += c.inv.res.Duration
			if c.broken {
				// pytest itself cannot start: a bad option in the
				// repository's configuration, a conftest.py that fails.
				rs.build = append(rs.build, pytestFailed(targets, inv.res.Output, dir)...)
				return finish(all, targets, []results{rs}, []bool{false}, own), nil
			}
			for k, t := range unknown {
				all.Missing = append(all.Missing, t.ID)
				all.Unknown = append(all.Unknown, why[k])
			}
			targets = known
			if len(targets) == 0 {
				return finish(all, nil, nil, nil, own), nil
			}
			args = c.args
			i--
			continue
		}
		if !inv.res.TimedOut && !ran && len(rs.build) == 0 {
			switch inv.res.ExitCode {
			case exitInternal, exitUsage, exitInterrupted:
				rs.build = append(rs.build, pytestFailed(targets, inv.res.Output, dir)...)
			}
		}
		runs = append(runs, rs)
		timedOut = append(timedOut, inv.res.TimedOut)
	}
	return finish(all, targets, runs, timedOut, own), nil
}

// collection is what pytest --collect-only said.
type collection struct {
	inv   invocation
	res   results
	items []string // the node ids collected
	// broken: pytest could not collect at all (a usage error, an internal
	// error), rather than some files failing to.
	broken bool
	// args are the arguments that run what was collected: the known ids,
	// and the files that did not collect as themselves.
	args []string
}

// collect runs pytest --collect-only on args with redfix's plugin, which
// writes the node ids collected into the outbox.
func (d Driver) collect(ctx context.Context, env pyEnv, dir, outbox string, r *resolver, args []string, name string) (collection, error) {
	if err := writePlugin(outbox); err != nil {
		return collection{}, err
	}
	out := "collected-" + name + ".json"
	inv, err := d.pytest(ctx, env, dir, outbox, "collect-"+name, nil, []string{"-p", pluginModule, "--collect-only"}, args,
		"REDFIX_COLLECTED="+filepath.Join(outbox, out))
	if err != nil {
		return collection{}, err
	}
	c := collection{inv: inv, res: r.results(inv)}
	data, err := readOutbox(outbox, out, report.MaxJUnitBytes)
	if err == nil {
		err = json.Unmarshal(data, &c.items)
	}
	switch inv.res.ExitCode {
	case exitOK, exitTestsFailed, exitInterrupted, exitNoTests:
		if err != nil && len(c.res.build) == 0 && inv.res.ExitCode != exitNoTests {
			c.broken = true
		}
	default:
		c.broken = err != nil && len(c.res.build) == 0
	}
	return c, nil
}

// known collects the targets' files and tells the targets pytest collects
// (or whose file fails to collect, which the run then reports) from those
// it does not, with the reason.
func (d Driver) known(ctx context.Context, env pyEnv, dir, outbox string, r *resolver, targets []testrun.Target) (known, unknown []testrun.Target, why []string, c collection, err error) {
	var paths []string
	seen := map[string]bool{}
	for _, t := range targets {
		if !seen[t.ImportPath] {
			seen[t.ImportPath] = true
			paths = append(paths, t.ImportPath)
		}
	}
	c, err = d.collect(ctx, env, dir, outbox, r, paths, "known")
	if err != nil || c.broken {
		return nil, nil, nil, c, err
	}
	broken := map[string]bool{}
	for _, b := range c.res.build {
		broken[b.Package] = true
	}
	added := map[string]bool{}
	for _, t := range targets {
		switch {
		case broken[t.ImportPath]:
			known = append(known, t)
			if !added[t.ImportPath] {
				added[t.ImportPath] = true
				c.args = append(c.args, t.ImportPath)
			}
		case t.IsPackage() || hasUnder(c.items, t):
			known = append(known, t)
			c.args = append(c.args, t.ID)
		default:
			unknown = append(unknown, t)
			why = append(why, fmt.Sprintf("resolve %s: pytest collects no such test in %s: %v", t.ID, t.ImportPath, testrun.ErrNotFound))
		}
	}
	return known, unknown, why, c, nil
}

// under reports a test (a node id) that the target t asks for: t itself, a
// parametrized case of it, a test of its class, file or directory.
func under(t testrun.Target, id string) bool {
	if id == t.ID || strings.HasPrefix(id, t.ID+"::") || strings.HasPrefix(id, t.ID+"[") {
		return true
	}
	if t.IsPackage() && !strings.HasSuffix(t.ImportPath, ".py") {
		return t.ImportPath == "." || strings.HasPrefix(id, t.ImportPath+"/")
	}
	return false
}

func hasUnder(ids []string, t testrun.Target) bool {
	for _, id := range ids {
		if under(t, id) {
			return true
		}
	}
	return false
}

// brokenFor reports a file that did not collect and that holds t's tests,
// or a conftest.py above them.
func brokenFor(t testrun.Target, build []task.Failure) bool {
	for _, b := range build {
		if b.Package == t.ImportPath || under(t, b.Package) {
			return true
		}
		if path.Base(b.Package) == "conftest.py" {
			if d := path.Dir(b.Package); d == "." || strings.HasPrefix(t.ImportPath, d+"/") {
				return true
			}
		}
	}
	return false
}
