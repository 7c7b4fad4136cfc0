package validators

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// oracle runs the task's failing tests OracleRuns times in one go test
// (-count): every one of them must run and pass every time.
func (v *Validators) oracle(ctx context.Context, c *candidate) (task.Gate, error) {
	ids := c.in.Task.Tests()
	if len(ids) == 0 {
		return task.Gate{Verdict: task.GateNotRun, Detail: "the task names no failing test to check"}, nil
	}
	n := v.cfg.OracleRuns
	o, err := v.runner.Run(ctx, c.in.Dir, ids, n)
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
		problems = append(problems, "go test timed out")
	}
	for _, id := range ids {
		if !passedIn(o, id) && !mentioned(problems, id) {
			problems = append(problems, id+" did not pass")
		}
	}
	if len(problems) > 0 {
		return fail(fmt.Sprintf("go test -count=%d: %s:\n- %s", n, o.Summary(), strings.Join(capList(problems, 20), "\n- "))), nil
	}
	return pass(fmt.Sprintf("%d/%d runs passed for each of %s (go test -count=%d)", n, n, strings.Join(ids, ", "), n)), nil
}

// regression runs every test of the changed packages and of the failing
// tests' packages. A test that fails after the patch is blamed only if it
// does not also fail at the base commit.
func (v *Validators) regression(ctx context.Context, c *candidate) (task.Gate, error) {
	pkgs := map[string]bool{}
	for _, p := range goPackages(c.in.Dir, c.files) {
		pkgs[p] = true
	}
	for _, id := range c.in.Task.Tests() {
		if t, err := testrun.Resolve(c.in.Dir, id); err == nil {
			pkgs[t.Dir] = true
		}
	}
	if len(pkgs) == 0 {
		return task.Gate{Verdict: task.GateNotRun, Detail: "no Go package is changed or tested by the task"}, nil
	}
	list := keys(pkgs)
	head, err := v.runner.RunPackages(ctx, c.in.Dir, list)
	if err != nil {
		return task.Gate{}, fmt.Errorf("run the tests of %s: %w", strings.Join(list, " "), err)
	}
	where := "go test " + strings.Join(list, " ")
	if head.OK() {
		return pass(fmt.Sprintf("%s: %d tests passed", where, len(head.Passed))), nil
	}
	if head.TimedOut {
		return fail(where + ": timed out"), nil
	}
	failing := failingIDs(head)

	dir, err := c.baseDir(ctx)
	if err != nil {
		return task.Gate{}, err
	}
	var atBase []string
	for _, p := range list {
		if hasGoFiles(dirOf(dir, p)) {
			atBase = append(atBase, p)
		}
	}
	before := map[string]bool{}
	if len(atBase) > 0 {
		base, err := v.runner.RunPackages(ctx, dir, atBase)
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
	note := ""
	if len(old) > 0 {
		note = fmt.Sprintf("; failing at base %s too, not blamed: %s", task.Short(c.in.Base), strings.Join(capList(old, 10), ", "))
	}
	if len(fresh) == 0 {
		return pass(fmt.Sprintf("%s: %d tests passed, no new failure%s", where, len(head.Passed), note)), nil
	}
	return fail(fmt.Sprintf("%s: %d new failure(s)%s:\n- %s", where, len(fresh), note, strings.Join(capList(fresh, 20), "\n- "))), nil
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
