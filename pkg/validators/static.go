package validators

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/task"
)

// static runs the language's static checks on the patch's change, after
// the patch and at the base: only findings that the base commit does not
// have fail the gate (the patch is not blamed for the repository's old
// debts). Findings are compared by file and message, without line
// numbers, which the patch moves. A driver with a static gate of its own
// (StaticGate) says which checks; another's Check runs on the changed
// files.
func (v *Validators) static(ctx context.Context, c *candidate) (task.Gate, error) {
	check := c.staticCheck()
	head, what, err := check(ctx, c.in.Dir)
	if err != nil {
		return task.Gate{}, err
	}
	if len(head) == 0 {
		return pass("clean: " + what), nil
	}
	dir, err := c.baseDir(ctx)
	if err != nil {
		return task.Gate{}, err
	}
	base, _, err := check(ctx, dir)
	if err != nil {
		return task.Gate{}, fmt.Errorf("at base: %w", err)
	}
	fresh, old := findings.Compare(head, base)
	if len(fresh) == 0 {
		return pass(fmt.Sprintf("no new finding: %s; %d finding(s) already at base %s", what, old, task.Short(c.in.Base))), nil
	}
	detail := fmt.Sprintf("%d new finding(s) (%s):\n- %s", len(fresh), what, strings.Join(capList(findings.Texts(fresh), 30), "\n- "))
	if old > 0 {
		detail += fmt.Sprintf("\n(%d other finding(s) already at base %s are not blamed)", old, task.Short(c.in.Base))
	}
	return fail(detail), nil
}

// staticCheck is the static gate's check of a checkout (the patched one or
// the base): the driver's own gate, else its Check on the files the patch
// leaves that are not test data.
func (c *candidate) staticCheck() func(ctx context.Context, dir string) ([]findings.Finding, string, error) {
	if s, ok := c.driver().(StaticGate); ok {
		return func(ctx context.Context, dir string) ([]findings.Finding, string, error) {
			return s.StaticCheck(ctx, dir, c.files)
		}
	}
	var files, sources []string // sources: what the evidence names
	for _, f := range c.files {
		if p := f.NewPath; p != "" && !c.isTestData(p) {
			files = append(files, p)
		}
	}
	sort.Strings(files)
	for _, p := range files {
		if c.isSource(p) {
			sources = append(sources, p)
		}
	}
	name := c.driver().Name() + " checks"
	if n, ok := c.driver().(ChecksNamer); ok {
		name = n.ChecksName()
	}
	what := name + " on " + listOr(sources, "no file")
	return func(ctx context.Context, dir string) ([]findings.Finding, string, error) {
		fs, err := c.driver().Check(ctx, dir, files)
		if err != nil {
			return nil, "", fmt.Errorf("static checks: %w", err)
		}
		return fs, what, nil
	}
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(capList(xs, 10), " ")
}

// capList keeps the first n items and says how many more there were.
func capList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), fmt.Sprintf("… and %d more", len(xs)-n))
}
