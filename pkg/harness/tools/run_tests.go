package tools

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// RunTests is the tool that runs tests, lists them, or ranks the lines they run.
const RunTests = "run_tests"

// RunTestsArgs are run_tests' arguments. Tests are test ids or packages
// ("./...", "./cmd/x", an import path); they default to the task's
// failing (oracle) tests. List lists the tests of the packages (by
// default those of the failing tests) without running them.
//
// Localize ranks the lines the tests run instead of reporting their
// results: spectrum-based fault localization over the coverage of the
// failing tests and of their packages' other tests.
type RunTestsArgs struct {
	Tests    []string `json:"tests,omitempty" description:"Test ids or packages to run; defaults to the task's failing tests."`
	List     bool     `json:"list,omitempty" description:"List the tests of the named packages (default: the failing tests' packages) instead of running them."`
	Localize bool     `json:"localize,omitempty" description:"Instead of results, rank the lines the failing tests (default: the task's) run, by spectrum-based fault localization over their coverage and that of the passing tests next to them."`
}

//go:embed run_tests.md
var runTestsDoc string

var runTestsTool = Define(RunTests, KindTests, runTestsDoc, (*Session).runTests)

// TestRunner runs tests in a checkout (a language driver does).
type TestRunner interface {
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
	RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
	List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error)
	Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error)
}

// TestRunFactor bounds the test runs after the session's first run of the
// task's failing tests: each may take this many times as long as that run,
// and at least Env.TestRunFloor. An edit that makes a test loop forever
// then costs a bounded run, not the driver's whole timeout.
const TestRunFactor = 10

// Caps on what run_tests shows.
const (
	failuresShown = 10 // failures shown with their output; the rest by message
	namesShown    = 20 // names listed for passed and not-run tests
)

func (s *Session) runTests(ctx context.Context, args RunTestsArgs) (Observation, error) {
	// Tests may write files: the listing is made again when needed, and
	// the text index checks every file against its filter.
	s.listed = false
	if s.text != nil {
		s.text.Verify()
	}
	var tests, pkgs []string
	for _, a := range args.Tests {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
		case strings.HasPrefix(a, "-"):
			return problem("%q is not a test or a package: flags are not accepted.", a), nil
		case s.isPackage(a):
			pkgs = append(pkgs, a)
		default:
			tests = append(tests, a)
		}
	}
	if args.List {
		return s.listTests(ctx, pkgs, tests)
	}
	if args.Localize {
		return s.localize(ctx, tests)
	}
	oracle := s.t.Tests()
	defaulted := len(tests) == 0 && len(pkgs) == 0
	if defaulted {
		tests = oracle
	}
	if len(tests) == 0 && len(pkgs) == 0 {
		return problem("The task names no failing tests; name the tests or packages to run."), nil
	}
	var out testrun.Outcome
	runCtx, bound, cancel := s.boundRun(ctx)
	defer cancel()
	started := time.Now()
	if len(tests) > 0 {
		o, err := s.env.Lang.Run(runCtx, s.ws.Dir, tests, 1)
		if err != nil && !stoppedRun(ctx, runCtx) {
			return Observation{}, fmt.Errorf("run tests %s: %w", strings.Join(tests, " "), err)
		}
		out = o
	}
	if len(pkgs) > 0 && !stoppedRun(ctx, runCtx) {
		o, err := s.env.Lang.RunPackages(runCtx, s.ws.Dir, pkgs)
		if err != nil && !stoppedRun(ctx, runCtx) {
			return Observation{}, fmt.Errorf("run the tests of %s: %w", strings.Join(pkgs, " "), err)
		}
		out = mergeOutcomes(out, o)
	}
	if stoppedRun(ctx, runCtx) {
		s.oraclePassed = false
		return Observation{
			Content: fmt.Sprintf("STOPPED: the tests did not finish within %s (%d times the first run of the task's failing tests, at least %s): "+
				"a change may make them loop or wait forever. Undo or rethink the last edit, or run fewer tests.",
				bound.Round(time.Second), TestRunFactor, s.env.TestRunFloor),
			IsError: true,
			Tests:   &TestsResult{OK: false, Stopped: true},
		}, nil
	}
	if defaulted && s.firstRun == 0 {
		s.firstRun = time.Since(started)
	}
	ok := out.OK()
	oracleState := s.oracleIn(out, oracle)
	if oracleState != oracleAbsent {
		s.oraclePassed = oracleState == oracleAllPassed
	}
	res := &TestsResult{OK: ok, Passed: out.Passed, Failed: capFailures(out.Failed), Build: capFailures(out.Build), NotRun: out.NotRun, Unknown: out.Unknown}

	content := runReport(out, defaulted, oracleState)
	// Failing tests are what run_tests reports, not a problem with the
	// call: only names that exist nowhere are the caller's to fix.
	isErr := len(out.Unknown) > 0 && len(out.Passed)+len(out.Failed)+len(out.Build) == 0
	return Observation{Content: content, IsError: isErr, Tests: res}, nil
}

// verdictOf heads a run's report: PASS when every test asked for ran and
// passed, FAIL when something failed (a test, a build, a test that ran
// with them, a timeout), and INCOMPLETE when nothing failed but not every
// test asked for ran (unknown names, tests that did not run): a run that
// failed nothing is never called a failure.
func verdictOf(out testrun.Outcome) string {
	switch {
	case out.OK():
		return "PASS"
	case len(out.Failed)+len(out.Build)+len(out.Others) > 0 || out.TimedOut:
		return "FAIL"
	}
	return "INCOMPLETE"
}

// runReport is a test run's outcome as run_tests shows it: the verdict,
// what did not build, the failures with their output, the rest by name.
// defaulted: the run was of the task's failing tests, by default.
func runReport(out testrun.Outcome, defaulted bool, oracleState oracleState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", verdictOf(out), out.Summary())
	switch {
	case defaulted:
		b.WriteString(" (the task's failing tests)")
	case oracleState == oracleAllPassed || oracleState == oracleSomeFailed:
		b.WriteString(" (these include the task's failing tests)")
	}
	b.WriteString("\n")
	for _, u := range out.Unknown {
		fmt.Fprintf(&b, "\nNot found: %s\n", u)
	}
	for _, f := range out.Build {
		what := f.Package
		if what == "" {
			what = "the tests"
		}
		fmt.Fprintf(&b, "\n--- BUILD FAILED: %s\n", what)
		writeFailure(&b, f)
	}
	for i, f := range out.Failed {
		if i == failuresShown {
			b.WriteString("\nMore failures (messages only):\n")
		}
		if i >= failuresShown {
			fmt.Fprintf(&b, "- %s: %s\n", f.ID(), f.Message)
			continue
		}
		fmt.Fprintf(&b, "\n--- FAIL: %s\n", f.ID())
		writeFailure(&b, f)
	}
	if len(out.Others) > 0 {
		b.WriteString("\nAlso failed (they ran with the asked tests, in the same parent or package):\n")
		for _, f := range capList(out.Others, namesShown) {
			fmt.Fprintf(&b, "- %s: %s\n", f.ID(), f.Message)
		}
	}
	if missing := notUnknown(out.Missing, out.Unknown); len(missing) > 0 {
		fmt.Fprintf(&b, "\nDid not run: %s\n", strings.Join(missing, ", "))
	}
	if len(out.NotRun) > 0 {
		fmt.Fprintf(&b, "\nNot run (%d started and never ended, because the test binary stopped; not failures): %s\n",
			len(out.NotRun), names(out.NotRun, namesShown))
	}
	if out.TimedOut {
		b.WriteString("\nThe run timed out; output so far:\n" + indent(trimLines(out.Output, failureLines), "  ") + "\n")
	}
	if len(out.Passed) > 0 {
		fmt.Fprintf(&b, "\nPassed: %s\n", names(out.Passed, namesShown))
	}
	return b.String()
}

// isPackage tells a package argument from a test id, as the repository's
// language driver resolves it ("tests/test_x.py", "src", an import path),
// or, for a name it does not resolve, by the patterns it takes for
// packages (PackagePatterns: "./...", "./cmd/x"). Anything else is a test,
// which the run reports as unknown when it is none.
func (s *Session) isPackage(a string) bool {
	if t, err := s.env.Lang.Resolve(s.ws.Dir, a); err == nil {
		return t.IsPackage()
	}
	if p, ok := s.env.Lang.(PackagePatterns); ok {
		return p.IsPackagePattern(a)
	}
	return false
}

type oracleState int

const (
	oracleAbsent     oracleState = iota // the run did not include every oracle test
	oracleAllPassed                     // every oracle test ran and passed
	oracleSomeFailed                    // every oracle test ran; one at least did not pass
)

// oracleIn says how the task's failing tests fared in a run, from their
// own outcomes.
func (s *Session) oracleIn(o testrun.Outcome, oracle []string) oracleState {
	if len(oracle) == 0 {
		return oracleAbsent
	}
	st := oracleAllPassed
	for _, id := range oracle {
		if t, err := s.resolveTest(id); err == nil {
			id = t.ID
		}
		runs, ok := o.Runs[id]
		switch {
		case !ok && failedIn(o, id):
			st = oracleSomeFailed
		case !ok:
			return oracleAbsent
		case runs.Fail > 0 || runs.Pass == 0:
			st = oracleSomeFailed
		}
	}
	if len(o.Build) > 0 || o.TimedOut {
		st = oracleSomeFailed
	}
	return st
}

func failedIn(o testrun.Outcome, id string) bool {
	for _, f := range o.Failed {
		if f.ID() == id || strings.HasPrefix(f.ID(), id+"/") {
			return true
		}
	}
	return false
}

// mergeOutcomes joins a run of tests and a run of packages; a test in both
// is reported once, as the package run saw it.
func mergeOutcomes(a, b testrun.Outcome) testrun.Outcome {
	if a.Runs == nil {
		return b
	}
	inB := func(id string) bool { _, ok := b.Runs[id]; return ok }
	out := b
	out.Runs = map[string]report.Runs{}
	for id, r := range a.Runs {
		out.Runs[id] = r
	}
	for id, r := range b.Runs {
		out.Runs[id] = r
	}
	for _, p := range a.Passed {
		if !inB(p) {
			out.Passed = append(out.Passed, p)
		}
	}
	for _, f := range a.Failed {
		if !inB(f.ID()) {
			out.Failed = append(out.Failed, f)
		}
	}
	out.Build = append(a.Build, b.Build...)
	out.Missing = append(a.Missing, b.Missing...)
	out.Unknown = append(a.Unknown, b.Unknown...)
	out.NotRun = append(a.NotRun, b.NotRun...)
	out.Incomplete = append(a.Incomplete, b.Incomplete...)
	out.Output = a.Output + b.Output
	out.TimedOut = a.TimedOut || b.TimedOut
	out.Duration = a.Duration + b.Duration
	out.Invocations = a.Invocations + b.Invocations
	return out
}

// suspectsShown caps the lines localize reports.
const suspectsShown = 25

// localize ranks the lines that the failing tests (by default the task's)
// run, by spectrum-based fault localization.
func (s *Session) localize(ctx context.Context, tests []string) (Observation, error) {
	if len(tests) == 0 {
		tests = s.t.Tests()
	}
	if len(tests) == 0 {
		return problem("Name the failing tests to localize."), nil
	}
	sp, err := s.env.Lang.Localize(ctx, s.ws.Dir, tests, suspectsShown)
	if err != nil {
		if ctx.Err() != nil {
			return Observation{}, fmt.Errorf("localize %s: %w", strings.Join(tests, " "), ctx.Err())
		}
		return problem("Cannot localize: %s", trimLines(err.Error(), failureLines)), nil
	}
	if len(sp.Suspects) == 0 {
		return Observation{Content: "No line of the module is run by the failing tests (no coverage): nothing to rank.", Tests: &TestsResult{}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Suspicious lines, ranked by spectrum-based fault localization (Ochiai) over the coverage of %s and %s:\n",
		plural(len(sp.Failing), "failing test", "failing tests"), plural(len(sp.Passing), "passing test", "passing tests"))
	for _, sus := range sp.Suspects {
		fmt.Fprintf(&b, "%s:%d score %.2f (run by %d failing, %d passing)", sus.File, sus.Line, sus.Score, sus.Failing, sus.Passing)
		if text, ok := s.lineText(sus.File, sus.Line); ok {
			fmt.Fprintf(&b, ": %s", clipLine(strings.TrimSpace(text), 120))
		}
		b.WriteString("\n")
	}
	return Observation{Content: b.String(), Tests: &TestsResult{Suspects: sp.Suspects}}, nil
}

// lineText is line n of the file at rel in the workspace.
func (s *Session) lineText(rel string, n int) (string, bool) {
	data, err := s.ws.ReadText(rel, maxReadFile)
	if err != nil {
		return "", false
	}
	lines := splitLines(data)
	if n < 1 || n > len(lines) {
		return "", false
	}
	return lines[n-1], true
}

// listTests lists the tests of packages (by default those of the named
// tests, or of the task's failing tests) without running them.
func (s *Session) listTests(ctx context.Context, pkgs, tests []string) (Observation, error) {
	if len(pkgs) == 0 {
		if len(tests) == 0 {
			tests = s.t.Tests()
		}
		for _, id := range tests {
			if t, err := s.resolveTest(id); err == nil && !slices.Contains(pkgs, t.Dir) {
				pkgs = append(pkgs, t.Dir)
			}
		}
	}
	if len(pkgs) == 0 {
		return problem("Name the packages whose tests to list (\"./...\", \"./cmd/x\")."), nil
	}
	listed, err := s.env.Lang.List(ctx, s.ws.Dir, pkgs)
	if err != nil && len(listed) == 0 {
		if ctx.Err() != nil {
			return Observation{}, fmt.Errorf("list tests: %w", ctx.Err())
		}
		return problem("Cannot list the tests: %s", trimLines(err.Error(), failureLines)), nil
	}
	var b strings.Builder
	for _, l := range listed {
		if len(l.Tests) == 0 {
			fmt.Fprintf(&b, "%s: no tests\n", l.ImportPath)
			continue
		}
		fmt.Fprintf(&b, "%s (%s):\n", l.ImportPath, plural(len(l.Tests), "test", "tests"))
		for _, t := range l.Tests {
			fmt.Fprintf(&b, "  %s\n", t)
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "\nSome packages could not be listed: %s\n", trimLines(err.Error(), failureLines))
	}
	b.WriteString("(Subtests are known only by running their parent.)\n")
	return Observation{Content: b.String()}, nil
}

func notUnknown(missing, unknown []string) []string {
	var out []string
	for _, m := range missing {
		if !slices.ContainsFunc(unknown, func(u string) bool { return strings.Contains(u, m) }) {
			out = append(out, m)
		}
	}
	return out
}

func names(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}

func capList[T any](xs []T, n int) []T {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

func writeFailure(b *strings.Builder, f task.Failure) {
	if f.Message != "" {
		fmt.Fprintf(b, "message: %s\n", f.Message)
	}
	if len(f.Frames) > 0 {
		fmt.Fprintf(b, "frames: %s\n", strings.Join(f.Frames, ", "))
	}
	if out := strings.TrimSpace(f.Output); out != "" {
		b.WriteString("output:\n" + indent(trimLines(out, failureLines), "  ") + "\n")
	}
}

func capFailures(fs []task.Failure) []task.Failure {
	if len(fs) == 0 {
		return nil
	}
	out := make([]task.Failure, len(fs))
	for i, f := range fs {
		f.Output = trimLines(f.Output, failureLines*2)
		out[i] = f
	}
	return out
}

// boundRun is the context a test run of the agent's runs under: after the
// session's first run of the task's failing tests, bounded to
// TestRunFactor times that run's time and at least Config.TestRunFloor.
func (s *Session) boundRun(ctx context.Context) (context.Context, time.Duration, context.CancelFunc) {
	if s.firstRun <= 0 {
		return ctx, 0, func() {}
	}
	bound := max(TestRunFactor*s.firstRun, s.env.TestRunFloor)
	runCtx, cancel := context.WithTimeout(ctx, bound)
	return runCtx, bound, cancel
}

// stoppedRun reports a run stopped by its bound while the episode goes on.
func stoppedRun(ctx, runCtx context.Context) bool {
	return ctx.Err() == nil && runCtx.Err() != nil
}
