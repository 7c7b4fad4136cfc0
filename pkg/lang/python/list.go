package python

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
)

// List lists the tests of the packages (test files, directories, "." for
// the whole checkout) as pytest collects them, without running them: one
// Listed per file, its tests named by the rest of their node ids
// ("test_y", "TestC::test_p[1]"), in pytest's order. A package that is not
// there, or a file that does not collect, is an error that carries
// pytest's report; the tests that did collect are returned with it.
func (d Driver) List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error) {
	dir, r, targets, pre, err := d.packages(dir, pkgs)
	if err != nil {
		return nil, err
	}
	if len(pre.Unknown) > 0 {
		return nil, fmt.Errorf("list the tests of %s: %s", strings.Join(pkgs, " "), strings.Join(pre.Unknown, "; "))
	}
	if len(targets) == 0 {
		return nil, nil
	}
	env, outbox, done, err := d.session(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := d.collect(ctx, env, dir, outbox, r, argsOf(targets), "list")
	if err != nil {
		return nil, fmt.Errorf("list the tests of %s: %w", strings.Join(pkgs, " "), err)
	}
	var out []testrun.Listed
	index := map[string]int{}
	for _, id := range c.items {
		file, test, ok := strings.Cut(id, "::")
		if !ok {
			continue
		}
		i, seen := index[file]
		if !seen {
			i = len(out)
			index[file] = i
			out = append(out, testrun.Listed{ImportPath: file})
		}
		out[i].Tests = append(out[i].Tests, test)
	}
	switch {
	case c.inv.res.TimedOut:
		return out, fmt.Errorf("list the tests of %s: timed out", strings.Join(pkgs, " "))
	case c.broken:
		return out, fmt.Errorf("list the tests of %s: pytest could not collect them: %s", strings.Join(pkgs, " "), strings.TrimSpace(c.inv.output()))
	case len(c.res.build) > 0:
		var b strings.Builder
		for _, f := range c.res.build {
			fmt.Fprintf(&b, "\n%s: %s\n%s", f.Package, f.Message, f.Output)
		}
		return out, fmt.Errorf("list the tests of %s: files that do not collect:%s", strings.Join(pkgs, " "), strings.TrimRight(b.String(), "\n"))
	}
	return out, nil
}
