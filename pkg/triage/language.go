package triage

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect"
	clipper "github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/workspace"
)

// Languages chooses a repository's language driver from its checkout
// (lang.Drivers satisfies it); the error wraps lang.ErrNoDriver when no
// driver knows the repository.
type Languages interface {
	For(repo, dir string) (lang.Driver, error)
}

// driverList is a Languages that lists its drivers (lang.Drivers does).
type driverList interface {
	All() []lang.Driver
}

// fingerprintDrivers are the drivers whose rules normalise a report's
// failures before they are fingerprinted: every driver langs holds, for
// failures are grouped before the report's driver is chosen; chosen
// alone when langs does not list them.
func fingerprintDrivers(langs Languages, chosen lang.Driver) []lang.Driver {
	if l, ok := langs.(driverList); ok {
		return l.All()
	}
	if chosen != nil {
		return []lang.Driver{chosen}
	}
	return nil
}

// maxSetupReason bounds the setup's error kept in a drop reason.
const maxSetupReason = 8 << 10

// language chooses the report's driver, once, from the workspace at the
// failing commit, and sets the checkout's dependencies up with it. A
// non-empty reason stops every group of the report: no driver knows the
// repository, or none is configured (ReasonCannotRun, a verdict: its files
// say so, and the group is dropped), or its setup failed (p.setupFailed;
// the reason names the command and its output): no verdict on the
// failure, so the group's task fails and the next report of the failure is
// triaged again.
func (p *process) language(ctx context.Context, ws *workspace.Workspace, log *zap.Logger) (reason string, err error) {
	if p.langChosen {
		return p.langReason, nil
	}
	t := p.t
	var d lang.Driver
	if t.cfg.Languages == nil {
		err = fmt.Errorf("%s: %w (none is configured)", p.in.Repo, lang.ErrNoDriver)
	} else {
		d, err = t.cfg.Languages.For(p.in.Repo, ws.Dir)
	}
	switch {
	case errors.Is(err, lang.ErrNoDriver):
		p.langChosen, p.langReason = true, "cannot run its tests: "+err.Error()
		return p.langReason, nil
	case err != nil:
		return "", fmt.Errorf("choose the language of %s: %w", p.in.Repo, err)
	}
	if d, err = p.configure(ctx, d, log); err != nil {
		p.langChosen, p.setupFailed = true, true
		p.langReason = "cannot run its tests: " + err.Error()
		return p.langReason, nil
	}
	p.lang, p.runner = d, bindRunner(t.runner, d)
	log.Info("language", zap.String("driver", d.Name()))
	if err := d.Setup(ctx, ws.Dir); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		// A setup that fails (a dependency that does not install, a
		// registry down) says nothing of the failure itself: the task
		// fails with what failed, and the group is left to the next
		// report rather than held for the verdict's hours.
		p.langChosen, p.setupFailed = true, true
		p.langReason = "cannot run its tests: the " + d.Name() + " setup failed: " + clipper.Middle(err.Error(), maxSetupReason)
		return p.langReason, nil
	}
	p.langChosen = true
	return "", nil
}

// configure is d running the tests as the repository's policy says
// (its tests: settings, lang.Configure); an error names the policy's
// source and what the driver refused.
func (p *process) configure(ctx context.Context, d lang.Driver, log *zap.Logger) (lang.Driver, error) {
	pol, err := p.repoPolicy(ctx, log)
	if err != nil || pol == nil || pol.Tests.IsZero() {
		return d, err
	}
	cd, err := lang.Configure(d, pol.Tests)
	if err != nil {
		return nil, fmt.Errorf("the test settings of its %s: %w", pol.Source, err)
	}
	p.tests = pol.Tests.String()
	log.Info("test settings", zap.String("tests", p.tests), zap.String("source", pol.Source))
	return cd, nil
}

// bindRunner is the runner of a report whose driver is d: r when it runs
// tests itself, d when r is nil, and d's runs reported when r is
// ReportRuns(nil, …).
func bindRunner(r Runner, d Runner) Runner {
	switch rr := r.(type) {
	case nil:
		return d
	case reportingRunner:
		if rr.next == nil {
			rr.next = d
		}
		return rr
	}
	return r
}

// bisectLanguage is the report's driver as bisection takes it (nil before
// one is chosen: bisection then refuses, saying there is no driver).
func (p *process) bisectLanguage() bisect.Language {
	if p.lang == nil {
		return nil
	}
	return p.lang
}

// builder is the report's runner when it builds (bisect.Builder), else
// its driver.
func (p *process) builder() bisect.Builder {
	if b, ok := p.runner.(bisect.Builder); ok {
		return b
	}
	if p.lang != nil {
		return p.lang
	}
	return nil
}

// setUp sets the checkout at dir up before its tests run at another commit
// (the default branch's head): false with the reason when it cannot be.
func (p *process) setUp(ctx context.Context, dir string) (ok bool, why string) {
	if p.lang == nil {
		return false, "no language driver"
	}
	if err := p.lang.Setup(ctx, dir); err != nil {
		return false, "setup failed: " + clipper.Middle(err.Error(), maxSetupReason)
	}
	return true, ""
}
