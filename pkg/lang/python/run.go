package python

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

//go:embed scripts/redfix_pytest_plugin.py
var pluginSource string

// pluginModule is the plugin's module name, written into each outbox.
const pluginModule = "redfix_pytest_plugin"

// pytest's exit codes.
const (
	exitOK          = 0
	exitTestsFailed = 1
	exitInterrupted = 2
	exitInternal    = 3
	exitUsage       = 4
	exitNoTests     = 5
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

// argsOf are the targets as pytest takes them: node ids, files and
// directories.
func argsOf(targets []testrun.Target) []string {
	args := make([]string, len(targets))
	for i, t := range targets {
		args[i] = t.ID
	}
	return args
}

// invocation is one pytest process and the JUnit report it left.
type invocation struct {
	res sandbox.Result
	rep report.Result
	// readErr says why no report was read: not written (pytest stopped
	// before its end), refused (a link, too large), or not JUnit.
	readErr error
}

// output is pytest's output, with a line saying why no report was read.
func (inv invocation) output() string {
	out := inv.res.Output
	if inv.readErr != nil && !inv.res.TimedOut {
		out = strings.TrimRight(out, "\n") + "\n[redfix: no JUnit report read from this run of pytest: " + inv.readErr.Error() + "]\n"
	}
	return out
}

// pytestArgs are the options of every pytest invocation: no cache written
// into the checkout, node ids relative to the checkout (rootdir), and a
// JUnit report into the outbox in the dialect resolve reads, with the
// tests' captured output.
func pytestArgs(dir, junit string) []string {
	return []string{
		"-m", "pytest", "-p", "no:cacheprovider", "-q", "--color=no",
		"--rootdir=" + dir, "--junitxml=" + junit,
		"-o", "junit_family=xunit2", "-o", "junit_logging=out-err",
		"-o", "junit_log_passing_tests=false", "-o", "junit_suite_name=" + suiteName,
	}
}

// suiteName is the JUnit suite's name. ParseJUnit names a test case's
// package after its suite when the case has no classname (a collection
// error's) or one equal to its name (test_x in test_x.py, as jest-junit
// writes every test): a name no module path can be tells those apart.
const suiteName = "redfix-pytest"

// vars is the environment of the repository's commands: redfix's plugin
// on the import path, and bytecode kept out of the checkout.
//
// Bytecode goes to the repository's cache (PYTHONPYCACHEPREFIX), where it
// outlives the run for the interpreter's and the dependencies' modules,
// while what was compiled of the checkout and the outbox is dropped when
// the operation ends (session). PYTHONDONTWRITEBYTECODE would keep
// imports from writing but not a test that compiles on purpose
// (py_compile, compileall), and with a prefix it makes every process
// compile pytest and the standard library again: a run takes three to
// four times as long. PYTHONHASHSEED is left random, as in CI: a test that
// depends on the order of a set must show it over count runs.
func (e pyEnv) vars(outbox string, extra ...string) []string {
	importPath := append([]string{outbox}, e.path...)
	return append([]string{
		"PYTHONPYCACHEPREFIX=" + e.pycache,
		"PYTHONPATH=" + strings.Join(importPath, string(os.PathListSeparator)),
	}, extra...)
}

// session prepares the checkout at dir for an operation and makes its
// outbox; done removes the outbox and the bytecode compiled of the
// checkout and the outbox.
func (d Driver) session(ctx context.Context, dir string) (env pyEnv, outbox string, done func(), err error) {
	env, err = d.prepare(ctx, dir)
	if err != nil {
		return pyEnv{}, "", nil, err
	}
	outbox, err = newOutbox()
	if err != nil {
		return pyEnv{}, "", nil, err
	}
	return env, outbox, func() {
		_ = os.RemoveAll(outbox)
		for _, p := range append([]string{dir, outbox}, aliasesOf(dir)...) {
			if filepath.IsAbs(p) {
				_ = os.RemoveAll(filepath.Join(env.pycache, p))
			}
		}
	}, nil
}

// writePlugin writes redfix's pytest plugin into outbox.
func writePlugin(outbox string) error {
	p := filepath.Join(outbox, pluginModule+".py")
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := os.WriteFile(p, []byte(pluginSource), 0o644); err != nil {
		return fmt.Errorf("python: write the pytest plugin: %w", err)
	}
	return nil
}

// pytest runs one pytest process in the checkout, its JUnit report written
// into outbox as junit-<name>.xml and read back from there. pre are
// arguments before pytest's own (coverage's), extra pytest's options.
func (d Driver) pytest(ctx context.Context, env pyEnv, dir, outbox, name string, pre, extra, args []string, vars ...string) (invocation, error) {
	junit := "junit-" + name + ".xml"
	cmd := append([]string{env.python}, pre...)
	cmd = append(cmd, pytestArgs(dir, filepath.Join(outbox, junit))...)
	cmd = append(cmd, extra...)
	cmd = append(cmd, args...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: cmd, Env: env.vars(outbox, vars...), Timeout: d.Timeout, MaxOutput: d.MaxOutput, Outbox: outbox})
	if err != nil {
		return invocation{}, fmt.Errorf("pytest in %s: %w", dir, err)
	}
	inv := invocation{res: res}
	data, err := readOutbox(outbox, junit, report.MaxJUnitBytes)
	if err != nil {
		inv.readErr = err
		return inv, nil
	}
	rep, err := report.ParseJUnit(bytes.NewReader(data))
	if err != nil {
		inv.readErr = err
		return inv, nil
	}
	inv.rep = rep
	return inv, nil
}

// results is what one invocation says, test by test, by node id.
type results struct {
	passed, skipped []string
	failed          []task.Failure // Package: the file; Test: the rest of the node id
	build           []task.Failure // Package: the file (or directory) that did not collect
}

func (rs results) empty() bool {
	return len(rs.passed)+len(rs.skipped)+len(rs.failed)+len(rs.build) == 0
}

// results maps a JUnit report's tests to node ids, and tells collection
// errors (a test case named after the module, with no classname) from
// tests' failures.
func (r *resolver) results(inv invocation) results {
	var rs results
	for _, id := range inv.rep.Passed {
		rs.passed = append(rs.passed, r.joined(id))
	}
	for _, id := range inv.rep.Skipped {
		rs.skipped = append(rs.skipped, r.joined(id))
	}
	aliases := aliasesOf(r.dir)
	for _, f := range inv.rep.Failures {
		if f.Kind == "error" && f.Message == "collection failure" && f.Package == suiteName {
			b := task.Failure{Package: r.collected(f.Test), Output: f.Output}
			describeBuild(&b, r.dir, aliases)
			rs.build = append(rs.build, b)
			continue
		}
		classname := f.Package
		if classname == suiteName {
			classname = f.Test
		}
		if file, test, ok := r.node(classname, f.Test); ok {
			f.Package, f.Test = file, test
		}
		describeFailure(&f, r.dir, aliases)
		rs.failed = append(rs.failed, f)
	}
	for _, f := range inv.rep.BuildErrors {
		describeBuild(&f, r.dir, aliases)
		rs.build = append(rs.build, f)
	}
	return rs
}

// joined is the node id of a passed or skipped test of a report, named by
// its classname and name joined with a dot (see suiteName).
func (r *resolver) joined(id string) string {
	if name, ok := strings.CutPrefix(id, suiteName+"."); ok {
		if file, test, ok := r.node(name, name); ok {
			return file + "::" + test
		}
	}
	return r.fromJoined(id)
}

// collected is the file or directory a collection error names by its
// dotted path ("tests.test_x", "tests.conftest", "tests").
func (r *resolver) collected(dotted string) string {
	if f := r.moduleFile(dotted); f != "" {
		return f
	}
	if d, ok := cleanRel(strings.ReplaceAll(dotted, ".", "/")); ok {
		if fi, err := untrusted.Lstat(r.dir, d); err == nil && fi.IsDir() {
			return d
		}
	}
	return dotted
}

func aliasesOf(dir string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		return []string{real}
	}
	return nil
}

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

// finish adds up the runs into all (see Run).
func finish(all testrun.Outcome, targets []testrun.Target, runs []results, timedOut []bool, own bool) testrun.Outcome {
	leaves := map[string]*report.Runs{}
	var order []string
	firstFailure := map[string]task.Failure{}
	builds := map[string]bool{}
	for _, b := range all.Build {
		builds[b.Package] = true
	}
	count := func(id string) *report.Runs {
		c := leaves[id]
		if c == nil {
			c = &report.Runs{}
			leaves[id] = c
			order = append(order, id)
		}
		return c
	}
	// What each target did in each run: a failure when a test under it
	// failed (or, for a file or directory, did not collect), else a pass
	// when one passed, else a skip when one was skipped.
	targetRuns := map[string]*report.Runs{}
	ran := map[string]bool{}
	for i, rs := range runs {
		for _, id := range rs.passed {
			count(id).Pass++
		}
		for _, id := range rs.skipped {
			count(id).Skip++
		}
		for _, f := range rs.failed {
			id := f.ID()
			count(id).Fail++
			if _, ok := firstFailure[id]; !ok {
				firstFailure[id] = f
			}
		}
		for _, b := range rs.build {
			if !builds[b.Package] {
				builds[b.Package] = true
				all.Build = append(all.Build, b)
			}
		}
		for _, t := range targets {
			var fail, pass, skip bool
			for _, f := range rs.failed {
				fail = fail || under(t, f.ID())
			}
			for _, id := range rs.passed {
				pass = pass || under(t, id)
			}
			for _, id := range rs.skipped {
				skip = skip || under(t, id)
			}
			if t.IsPackage() && (brokenFor(t, rs.build) || timedOut[i]) {
				fail = true
			}
			c := targetRuns[t.ID]
			if c == nil {
				c = &report.Runs{}
				targetRuns[t.ID] = c
			}
			switch {
			case fail:
				c.Fail++
			case pass:
				c.Pass++
			case skip:
				c.Skip++
			}
			if fail || pass || skip {
				ran[t.ID] = true
			}
		}
	}
	asked := func(id string) bool {
		if !own {
			return true
		}
		for _, t := range targets {
			if under(t, id) {
				return true
			}
		}
		return false
	}
	passed := map[string]bool{}
	for _, id := range order {
		c := leaves[id]
		if !asked(id) {
			if c.Fail > 0 {
				all.Others = append(all.Others, firstFailure[id])
			}
			continue
		}
		all.Runs[id] = *c
		switch {
		case c.Fail > 0:
			all.Failed = append(all.Failed, firstFailure[id])
		case c.Pass > 0:
			all.Passed = append(all.Passed, id)
			passed[id] = true
		}
	}
	for _, t := range targets {
		c := targetRuns[t.ID]
		if own && c != nil && ran[t.ID] {
			all.Runs[t.ID] = *c
			if c.Fail == 0 && c.Pass > 0 && !passed[t.ID] {
				all.Passed = append(all.Passed, t.ID)
			}
		}
		if ran[t.ID] || brokenFor(t, all.Build) || !own {
			continue
		}
		all.Missing = append(all.Missing, t.ID)
		for _, to := range timedOut {
			if to {
				all.Incomplete = append(all.Incomplete, t.ImportPath)
				break
			}
		}
	}
	return all
}

// pytestFailed says, for each target's file or directory, that pytest
// could not run its tests, with pytest's own words.
func pytestFailed(targets []testrun.Target, output, dir string) []task.Failure {
	var out []task.Failure
	seen := map[string]bool{}
	aliases := aliasesOf(dir)
	for _, t := range targets {
		if seen[t.ImportPath] {
			continue
		}
		seen[t.ImportPath] = true
		f := task.Failure{Package: t.ImportPath, Output: output}
		describeBuild(&f, dir, aliases)
		out = append(out, f)
	}
	return out
}
