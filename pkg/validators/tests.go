package validators

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// oracle runs the task's failing tests OracleRuns times in one run of the
// driver: every one of them must run and pass every time.
func (v *Validators) oracle(ctx context.Context, c *candidate) (task.Gate, error) {
	ids := c.in.Task.Tests()
	if len(ids) == 0 {
		return task.Gate{Verdict: task.GateNotRun, Detail: "the task names no failing test to check"}, nil
	}
	n := v.cfg.OracleRuns
	o, err := c.driver().Run(ctx, c.in.Dir, ids, n)
	if err != nil {
		if infra(ctx, err) || !isTestNotFound(err) {
			return task.Gate{}, fmt.Errorf("run the failing tests: %w", err)
		}
		return fail(fmt.Sprintf("the failing tests cannot be found in the patched module: %v", err)), nil
	}
	var problems []string
	for _, f := range o.Build {
		problems = append(problems, fmt.Sprintf("%s does not build: %s", orDefault(f.Package, "a package"), f.Message))
	}
	for _, f := range dedupFailures(o.Failed) {
		problems = append(problems, fmt.Sprintf("%s failed: %s", f.ID(), failureText(f)))
	}
	for _, u := range o.Unknown {
		problems = append(problems, u)
	}
	for _, id := range o.Missing {
		if !mentioned(o.Unknown, id) {
			problems = append(problems, id+" did not run")
		}
	}
	if o.TimedOut {
		problems = append(problems, c.testTool()+" timed out")
	}
	for _, id := range ids {
		if !passedIn(o, id) && !mentioned(problems, id) {
			problems = append(problems, id+" did not pass")
		}
	}
	cmd := fmt.Sprintf("%s, %d runs", c.testTool(), n)
	if r, ok := c.driver().(RepeatedRuns); ok {
		cmd = r.RepeatedRuns(n)
	}
	if len(problems) > 0 {
		return fail(fmt.Sprintf("%s: %s:\n- %s", cmd, o.Summary(), strings.Join(capList(problems, 20), "\n- "))), nil
	}
	return pass(fmt.Sprintf("%d/%d runs passed for each of %s (%s)", n, n, strings.Join(ids, ", "), cmd)), nil
}

// regression runs every test of the changed packages and of the failing
// tests' packages, then, within the time budget, the tests of the packages
// that depend on the changed ones (nearest first). A test that fails after
// the patch is blamed only if it does not also fail at the base commit;
// packages the budget left no time for are named.
func (v *Validators) regression(ctx context.Context, c *candidate) (task.Gate, error) {
	start := time.Now()
	primary, deps, err := c.regressionScope(ctx, v.cfg.RegressionBudget >= 0)
	if err != nil {
		if infra(ctx, err) {
			return task.Gate{}, err
		}
		v.log.Warn("dependents of the change", zap.Error(err))
	}
	none, depsAre := c.regressionTerms()
	if len(primary) == 0 && len(deps) == 0 {
		return task.Gate{Verdict: task.GateNotRun, Detail: none}, nil
	}

	var (
		ran      []string // every package whose tests ran, in order
		passed   int
		failing  = map[string]string{}
		pkgOf    = map[string][]string{} // failing id -> its package dir(s)
		timedOut []string
		notRun   []string
	)
	runBatch := func(batch []string) error {
		o, err := c.driver().RunPackages(ctx, c.in.Dir, batch)
		if err != nil {
			return fmt.Errorf("run the tests of %s: %w", strings.Join(batch, " "), err)
		}
		ran = append(ran, batch...)
		passed += len(o.Passed)
		if o.TimedOut {
			timedOut = append(timedOut, batch...)
		}
		for id, msg := range failingIDs(o) {
			failing[id] = msg
			pkgOf[id] = c.packageOfFailure(id, batch)
		}
		return nil
	}
	if len(primary) > 0 {
		if err := runBatch(primary); err != nil {
			return task.Gate{}, err
		}
	}
	todo := slices.DeleteFunc(slices.Clone(deps), func(d string) bool { return slices.Contains(primary, d) })
	for i := 0; i < len(todo); i += dependentBatch {
		batch := todo[i:min(i+dependentBatch, len(todo))]
		if time.Since(start) >= v.cfg.RegressionBudget {
			notRun = append(notRun, todo[i:]...)
			break
		}
		if err := runBatch(batch); err != nil {
			return task.Gate{}, err
		}
	}

	where := c.regressionWhere(primary, ran, depsAre)
	var notes []string
	if len(notRun) > 0 {
		notes = append(notes, fmt.Sprintf("time budget of %s spent: the tests of %d dependent package(s) did not run: %s",
			v.cfg.RegressionBudget, len(notRun), strings.Join(capList(notRun, 20), " ")))
	}
	if len(timedOut) > 0 {
		return fail(where + ": timed out in " + strings.Join(timedOut, " ") + joinNotes(notes)), nil
	}
	if len(failing) == 0 {
		return pass(fmt.Sprintf("%s: %d tests passed%s", where, passed, joinNotes(notes))), nil
	}

	// Failures that already happen at the base are not the patch's.
	before, err := c.failingAtBase(ctx, pkgOf)
	if err != nil {
		return task.Gate{}, err
	}
	var fresh, old []string
	for id, msg := range failing {
		if before[id] {
			old = append(old, id)
			continue
		}
		fresh = append(fresh, id+": "+msg)
	}
	sort.Strings(fresh)
	sort.Strings(old)
	if len(old) > 0 {
		notes = append([]string{fmt.Sprintf("failing at base %s too, not blamed: %s", task.Short(c.in.Base), strings.Join(capList(old, 10), ", "))}, notes...)
	}
	if len(fresh) == 0 {
		return pass(fmt.Sprintf("%s: %d tests passed, no new failure%s", where, passed, joinNotes(notes))), nil
	}
	return fail(fmt.Sprintf("%s: %d new failure(s)%s:\n- %s", where, len(fresh), joinNotes(notes), strings.Join(capList(fresh, 20), "\n- "))), nil
}

// regressionWhere says where the regression gate ran: the first packages,
// and the dependents that ran after them.
func (c *candidate) regressionWhere(primary, ran []string, depsAre string) string {
	where := c.testTool() + " " + strings.Join(primary, " ")
	if n := len(ran) - len(primary); n > 0 {
		if len(primary) == 0 {
			where = c.testTool() + " on"
		} else {
			where += " and"
		}
		where += fmt.Sprintf(" %d %s: %s", n, depsAre, strings.Join(capList(ran[len(primary):], 10), " "))
	}
	return where
}

// failingAtBase are the tests failing at the base in the packages of the
// failures after the patch (pkgOf: a failing id's packages) that the base
// has.
func (c *candidate) failingAtBase(ctx context.Context, pkgOf map[string][]string) (map[string]bool, error) {
	dir, err := c.baseDir(ctx)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]bool{}
	for _, ps := range pkgOf {
		for _, p := range ps {
			if c.existsAtBase(dir, p) {
				pkgs[p] = true
			}
		}
	}
	before := map[string]bool{}
	if len(pkgs) == 0 {
		return before, nil
	}
	atBase := keys(pkgs)
	base, err := c.driver().RunPackages(ctx, dir, atBase)
	if err != nil {
		return nil, fmt.Errorf("run the tests of %s at base: %w", strings.Join(atBase, " "), err)
	}
	for id := range failingIDs(base) {
		before[id] = true
	}
	return before, nil
}

// regressionScope is where the regression gate starts, and the dependents
// it runs within its budget (none unless dependents): the driver's
// (Regression), else the failing tests' files and the test files the patch
// changes.
func (c *candidate) regressionScope(ctx context.Context, dependents bool) ([]string, []string, error) {
	if r, ok := c.driver().(Regression); ok {
		return r.RegressionScope(ctx, c.in.Dir, c.files, c.in.Task.Tests(), dependents)
	}
	isTestModule := func(p string) bool { return c.driver().IsTestFile(p) }
	first, _ := gaterules.TestFiles(c.in.Dir, c.files, c.in.Task.Tests(), c.driver().Resolve, c.isSource, isTestModule)
	return keys(first), nil, nil
}

// regressionTerms word the regression gate's evidence: why nothing ran,
// and what the dependents are.
func (c *candidate) regressionTerms() (none, dependents string) {
	if r, ok := c.driver().(Regression); ok {
		return r.RegressionTerms()
	}
	return "no test is named by the task or changed", "dependent package(s)"
}

// existsAtBase reports whether the package p (a test file or directory,
// or the driver's package) is in the base checkout at dir.
func (c *candidate) existsAtBase(dir, p string) bool {
	if r, ok := c.driver().(PackageFailures); ok {
		return r.HasPackage(dir, p)
	}
	_, err := untrusted.Lstat(dir, p)
	return err == nil
}

// packageOfFailure finds which of the batch's packages a failing id
// belongs to; all of them when it cannot tell. Without the driver's word
// (PackageFailures), a test named FILE::NAME is of the longest package
// holding FILE.
func (c *candidate) packageOfFailure(id string, batch []string) []string {
	if r, ok := c.driver().(PackageFailures); ok {
		return r.PackageOfFailure(c.in.Dir, id, batch)
	}
	name := strings.TrimPrefix(id, "the build of ")
	file, _, _ := strings.Cut(name, "::")
	best := ""
	for _, p := range batch {
		if (file == p || strings.HasPrefix(file, p+"/") || p == ".") && len(p) > len(best) {
			best = p
		}
	}
	if best != "" {
		return []string{best}
	}
	return batch
}

// dependentBatch is how many dependent packages one run of the driver
// takes: small enough to stop near the budget, large enough for the
// runner's parallelism.
const dependentBatch = 4

func joinNotes(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

// failingIDs are the tests whose own outcome was fail and the packages that
// did not build, each with what it said. Tests that never ran (paused when
// a panic ended their binary) are not failures: the panic is.
func failingIDs(o testrun.Outcome) map[string]string {
	ids := map[string]string{}
	for _, f := range o.Failed {
		ids[f.ID()] = failureText(f)
	}
	for _, f := range o.Others {
		ids[f.ID()] = failureText(f)
	}
	for _, f := range o.Build {
		ids["the build of "+orDefault(f.Package, "the tested packages")] = failureText(f)
	}
	return ids
}

// failureText is a failure's message with where it happened; a failure
// without a message is described by the first lines of its output.
func failureText(f task.Failure) string {
	msg := f.Message
	if msg == "" {
		msg = "failed without a message"
		if out := strings.TrimSpace(f.Output); out != "" {
			msg += "; output: " + clip.Middle(out, 300)
		}
	}
	if len(f.Frames) > 0 {
		msg += " (at " + f.Frames[0] + ")"
	}
	return msg
}

func passedIn(o testrun.Outcome, id string) bool {
	for _, p := range o.Passed {
		if p == id || strings.HasSuffix(p, "."+id) || strings.HasPrefix(p, id+"/") {
			return true
		}
	}
	return false
}

// dedupFailures keeps one failure per test: with -count each run reports.
func dedupFailures(fs []task.Failure) []task.Failure {
	seen := map[string]bool{}
	var out []task.Failure
	for _, f := range fs {
		if !seen[f.ID()] {
			seen[f.ID()] = true
			out = append(out, f)
		}
	}
	return out
}

func mentioned(problems []string, id string) bool {
	for _, p := range problems {
		if strings.Contains(p, id) {
			return true
		}
	}
	return false
}

func isTestNotFound(err error) bool {
	return errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
