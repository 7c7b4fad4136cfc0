package validators

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// oracle runs the task's failing tests OracleRuns times in one go test
// (-count): every one of them must run and pass every time.
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
	cmd := fmt.Sprintf("go test -count=%d", n)
	if !c.isGo() {
		cmd = fmt.Sprintf("%s, %d runs", c.testTool(), n)
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
	var (
		primary []string
		deps    []Dependent
		err     error
	)
	if c.isGo() {
		primary, deps, err = v.goTargets(ctx, c)
	} else {
		primary, deps, err = v.fileTargets(c)
	}
	if err != nil {
		return task.Gate{}, err
	}
	if len(primary) == 0 && len(deps) == 0 {
		what := "no Go package is changed or tested by the task"
		if !c.isGo() {
			what = "no test is named by the task, changed, or imports a changed module"
		}
		return task.Gate{Verdict: task.GateNotRun, Detail: what}, nil
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
	seen := map[string]bool{}
	for _, p := range primary {
		seen[p] = true
	}
	var todo []Dependent
	for _, d := range deps {
		if !seen[d.Dir] {
			todo = append(todo, d)
		}
	}
	for i := 0; i < len(todo); i += dependentBatch {
		batch := todo[i:min(i+dependentBatch, len(todo))]
		if time.Since(start) >= v.cfg.RegressionBudget {
			for _, d := range todo[i:] {
				notRun = append(notRun, d.Dir)
			}
			break
		}
		var dirs []string
		for _, d := range batch {
			dirs = append(dirs, d.Dir)
		}
		if err := runBatch(dirs); err != nil {
			return task.Gate{}, err
		}
	}

	where := c.testTool() + " " + strings.Join(primary, " ")
	if n := len(ran) - len(primary); n > 0 {
		what := "dependent package(s)"
		switch {
		case c.isNode():
			what = "test file(s) importing the changed modules"
		case !c.isGo():
			what = "test module(s) importing the changed ones"
		}
		if len(primary) == 0 {
			where = c.testTool() + " on"
		} else {
			where += " and"
		}
		where += fmt.Sprintf(" %d %s: %s", n, what, strings.Join(capList(ran[len(primary):], 10), " "))
	}
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
	before := map[string]bool{}
	var atBase []string
	dir, err := c.baseDir(ctx)
	if err != nil {
		return task.Gate{}, err
	}
	basePkgs := map[string]bool{}
	for _, ps := range pkgOf {
		for _, p := range ps {
			if c.existsAtBase(dir, p) {
				basePkgs[p] = true
			}
		}
	}
	atBase = keys(basePkgs)
	if len(atBase) > 0 {
		base, err := c.driver().RunPackages(ctx, dir, atBase)
		if err != nil {
			return task.Gate{}, fmt.Errorf("run the tests of %s at base: %w", strings.Join(atBase, " "), err)
		}
		for id := range failingIDs(base) {
			before[id] = true
		}
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

// goTargets are the Go packages whose tests the regression gate runs
// first (the changed ones and the failing tests'), and the packages that
// depend on the changed ones, nearest first.
func (v *Validators) goTargets(ctx context.Context, c *candidate) ([]string, []Dependent, error) {
	changed := goPackages(c.in.Dir, c.files)
	pkgs := map[string]bool{}
	for _, p := range changed {
		pkgs[p] = true
	}
	for _, id := range c.in.Task.Tests() {
		if t, err := golang.Resolve(c.in.Dir, id); err == nil {
			pkgs[t.Dir] = true
		}
	}
	if len(pkgs) == 0 {
		return nil, nil, nil
	}
	var deps []Dependent
	if len(changed) > 0 && v.cfg.RegressionBudget >= 0 {
		var err error
		deps, err = dependents(ctx, c.in.Dir, changed)
		if err != nil {
			if infra(ctx, err) {
				return nil, nil, err
			}
			v.log.Warn("dependents of the changed packages", zap.Error(err))
		}
	}
	return keys(pkgs), deps, nil
}

// fileTargets are, for Python, JavaScript and TypeScript (the languages
// whose packages are test files), the test files whose tests the
// regression gate runs first (the failing tests' and the changed test
// files), and the test files that import the changed modules, nearest
// first.
func (v *Validators) fileTargets(c *candidate) ([]string, []Dependent, error) {
	first := map[string]bool{}
	for _, id := range c.in.Task.Tests() {
		if t, err := c.driver().Resolve(c.in.Dir, id); err == nil {
			first[t.ImportPath] = true
		}
	}
	var changed []string
	for _, f := range c.files {
		for _, p := range f.Paths() {
			if !c.isSource(p) {
				continue
			}
			changed = append(changed, p)
			if c.isTestModule(p) && p == f.NewPath {
				if fi, err := untrusted.Lstat(c.in.Dir, p); err == nil && fi.Mode().IsRegular() {
					first[p] = true
				}
			}
		}
	}
	if len(changed) == 0 || v.cfg.RegressionBudget < 0 {
		return keys(first), nil, nil
	}
	switch {
	case c.isPython():
		mods, err := pyImportGraph(c.in.Dir)
		if err != nil {
			v.log.Warn("importers of the changed modules", zap.Error(err))
			return keys(first), nil, nil
		}
		return keys(first), pyImporters(mods, changed, first), nil
	case c.isNode():
		mods, err := jsImportGraph(c.in.Dir)
		if err != nil {
			v.log.Warn("importers of the changed modules", zap.Error(err))
			return keys(first), nil, nil
		}
		return keys(first), jsImporters(mods, changed, c.isTestModule, first), nil
	}
	return keys(first), nil, nil
}

// isTestModule reports a file of tests the runner runs: pytest's test
// modules; the driver's JavaScript and TypeScript test files but the
// runners' own files.
func (c *candidate) isTestModule(p string) bool {
	if c.isNode() {
		return isJSSource(p) && c.driver().IsTestFile(p) && !jsRunnerFile(p)
	}
	return isTestModule(p)
}

// existsAtBase reports whether the package p (a Go package's pattern, a
// test file or directory) is in the base checkout at dir.
func (c *candidate) existsAtBase(dir, p string) bool {
	if c.isGo() {
		return hasGoFiles(dirOf(dir, p))
	}
	_, err := untrusted.Lstat(dir, p)
	return err == nil
}

// packageOfFailure is packageOfFailure in the candidate's language: for
// Python, the batch's test file (or directory) a node id is in.
func (c *candidate) packageOfFailure(id string, batch []string) []string {
	if c.isGo() {
		return packageOfFailure(id, batch, c.in.Dir)
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

// dependentBatch is how many dependent packages one go test runs: small
// enough to stop near the budget, large enough for go test's parallelism.
const dependentBatch = 4

func joinNotes(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

// packageOfFailure finds which of the batch's package dirs a failing id
// ("import/path.TestX", "the build of import/path") belongs to; all of them
// when it cannot tell.
func packageOfFailure(id string, batch []string, dir string) []string {
	mod, err := golang.Module(dir)
	if err == nil {
		name := strings.TrimPrefix(id, "the build of ")
		best := ""
		for _, p := range batch {
			imp := mod
			if p != "." {
				imp = mod + "/" + strings.TrimPrefix(p, "./")
			}
			if (strings.HasPrefix(name, imp+".") || name == imp || strings.HasPrefix(name, imp+" ")) && len(p) > len(best) {
				best = p
			}
		}
		if best != "" {
			return []string{best}
		}
	}
	return batch
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

func dirOf(root, pattern string) string {
	return root + "/" + strings.TrimPrefix(pattern, "./")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
