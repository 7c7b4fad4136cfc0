package triage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testrun"
)

// Runner runs tests in a checkout (a language driver does).
type Runner interface {
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
}

// ReportRuns is next telling report of every run as it ends: which tests,
// how many times, what became of them and how long it took. Commands a
// person watches show it as progress.
//
// With next nil, triage runs each report's tests with the report's
// language driver, and reports them.
func ReportRuns(next Runner, report func(stage, detail string)) Runner {
	return reportingRunner{next: next, report: report}
}

type reportingRunner struct {
	next   Runner // the report's driver when nil (see bindRunner)
	report func(stage, detail string)
}

// errUnbound is a run of a reporting runner that was never bound to a
// driver.
var errUnbound = fmt.Errorf("no runner and no language driver to run the tests: %w", lang.ErrNoDriver)

// Build builds with next when it builds (bisect.Builder), and reports it.
func (r reportingRunner) Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	b, ok := r.next.(bisect.Builder)
	if !ok {
		return testrun.Outcome{}, fmt.Errorf("build %s: %w", strings.Join(pkgs, " "), errUnbound)
	}
	start := time.Now()
	out, err := b.Build(ctx, dir, pkgs)
	took := time.Since(start).Round(100 * time.Millisecond)
	if err != nil {
		r.report("build", fmt.Sprintf("%s: %v (%s)", strings.Join(pkgs, " "), err, took))
	} else {
		r.report("build", fmt.Sprintf("%s: %d did not build (%s)", strings.Join(pkgs, " "), len(out.Build), took))
	}
	return out, err
}

func (r reportingRunner) Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	if r.next == nil {
		return testrun.Outcome{}, errUnbound
	}
	start := time.Now()
	out, err := r.next.Run(ctx, dir, ids, count)
	tests := strings.Join(ids, " ")
	if len(ids) > 3 {
		tests = fmt.Sprintf("%s and %d more", strings.Join(ids[:3], " "), len(ids)-3)
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	switch {
	case err != nil:
		r.report("test run", fmt.Sprintf("%s ×%d: %v (%s)", tests, count, err, took))
	default:
		r.report("test run", fmt.Sprintf("%s ×%d: %d passed, %d failed, %d did not build, %d did not run (%s)",
			tests, count, len(out.Passed), len(out.Failed), len(out.Build), len(out.Missing), took))
	}
	return out, err
}
