package node

import (
	"context"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
)

// Build loads the packages' test files without running a test (each
// runner with a name pattern no test has; mocha with --dry-run): the files
// that do not load (a syntax error, a module not found, a TypeScript
// transform that fails, an exception while declaring tests) are in Build,
// with the runner's report of them. Types are not checked: tsc is Check's.
func (d Driver) Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	dir, _, targets, all, err := d.targets(dir, pkgs)
	if err != nil || len(targets) == 0 {
		return all, err
	}
	inv, err := d.collect(ctx, dir, targets, "build")
	if err != nil {
		return testrun.Outcome{}, err
	}
	all.Invocations = 1
	all.Output = inv.output()
	all.Duration, all.TimedOut = inv.res.Duration, inv.res.TimedOut
	all.Build = inv.rs.build
	return all, nil
}

// collect loads targets' files in one runner process and runs no test; a
// runner that wrote no report (its configuration fails, mocha stopped at
// a file) makes every target's file a build failure.
func (d Driver) collect(ctx context.Context, dir string, targets []testrun.Target, name string) (invocation, error) {
	s, err := d.session(ctx, dir)
	if err != nil {
		return invocation{}, err
	}
	defer s.done()
	inv, err := d.invoke(ctx, s, runnerOf(dir), name, targets, true)
	if err != nil {
		return invocation{}, err
	}
	if inv.readErr != nil && !inv.res.TimedOut {
		inv.rs.build = append(inv.rs.build, runnerFailed(targets, inv.res.Output, dir)...)
	}
	return inv, nil
}

// List lists the tests of the packages (test files, directories, "." for
// the whole checkout) as their runner loads them, without running them:
// one Listed per file, its tests named by their describe blocks and
// titles ("price > applies the discount"), in the runner's order. A
// package that is not there, or a file that does not load, is an error
// that carries the runner's report; the tests that did load are returned
// with it.
func (d Driver) List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error) {
	dir, _, targets, pre, err := d.targets(dir, pkgs)
	if err != nil {
		return nil, err
	}
	if len(pre.Unknown) > 0 {
		return nil, fmt.Errorf("list the tests of %s: %s", strings.Join(pkgs, " "), strings.Join(pre.Unknown, "; "))
	}
	if len(targets) == 0 {
		return nil, nil
	}
	inv, err := d.collect(ctx, dir, targets, "list")
	if err != nil {
		return nil, fmt.Errorf("list the tests of %s: %w", strings.Join(pkgs, " "), err)
	}
	var out []testrun.Listed
	index := map[string]int{}
	add := func(id string) {
		file, test, ok := strings.Cut(id, "::")
		if !ok {
			return
		}
		i, seen := index[file]
		if !seen {
			i = len(out)
			index[file] = i
			out = append(out, testrun.Listed{ImportPath: file})
		}
		out[i].Tests = append(out[i].Tests, test)
	}
	for _, id := range inv.rs.order {
		add(id)
	}
	switch {
	case inv.res.TimedOut:
		return out, fmt.Errorf("list the tests of %s: timed out", strings.Join(pkgs, " "))
	case len(inv.rs.build) > 0:
		var b strings.Builder
		for _, f := range inv.rs.build {
			fmt.Fprintf(&b, "\n%s: %s\n%s", f.Package, f.Message, f.Output)
		}
		return out, fmt.Errorf("list the tests of %s: files that do not load:%s", strings.Join(pkgs, " "), strings.TrimRight(b.String(), "\n"))
	}
	return out, nil
}
