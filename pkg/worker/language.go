package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testenv"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/workspace"
)

// Language is a repository's language driver as the pipeline uses it (a
// lang.Driver): it sets the checkout up, and the agent's tools and the
// judge work through it.
type Language interface {
	Name() string
	// Setup makes a checkout's dependencies ready; its error names the
	// command that failed and its output.
	Setup(ctx context.Context, dir string) error
	tools.Language
	judge.Language
	validators.Language
}

// Languages chooses a repository's driver from its checkout (lang.Drivers).
type Languages interface {
	For(repo, dir string) (lang.Driver, error)
}

// NamedLanguages gives a driver by name (lang.Drivers), for a repository
// whose policy names one.
type NamedLanguages interface {
	Named(name string) (lang.Driver, error)
}

// LanguageAgent is an agent whose tools can work through a job's driver;
// the pipeline hands it the driver it chose.
type LanguageAgent interface {
	WithLanguage(l tools.Language) Agent
}

// jobLanguage is the driver of one job, chosen once, from the first of its
// candidates' checkouts to be ready (they are checkouts of one commit).
type jobLanguage struct {
	// driver is the one the repository's policy names ("" detects);
	// tests its test settings, from source (lang.Configure).
	driver string
	tests  testenv.Settings
	source string
	once   sync.Once
	l      Language
	err    error
}

// errNoLanguages fails the jobs of a pipeline without language drivers:
// no driver, as for a repository none knows.
var errNoLanguages = fmt.Errorf("the pipeline has no language drivers to choose from: %w", lang.ErrNoDriver)

// language is the job's driver, with ws (a candidate's checkout) set up
// for it. A repository no driver serves, or one whose setup fails, is a
// permanent failure of the task.
func (p *Pipeline) language(ctx context.Context, j *jobLanguage, t task.Task, ws *workspace.Workspace) (Language, error) {
	if p.Languages == nil {
		return nil, Permanent(fmt.Errorf("choose the language of %s: %w", t.Repo, errNoLanguages))
	}
	j.once.Do(func() {
		var d lang.Driver
		var err error
		if named, ok := p.Languages.(NamedLanguages); ok && j.driver != "" {
			d, err = named.Named(j.driver)
		} else {
			d, err = p.Languages.For(t.Repo, ws.Dir)
		}
		if err != nil {
			if errors.Is(err, lang.ErrNoDriver) {
				err = Permanent(err)
			}
			j.err = fmt.Errorf("choose the language of %s: %w", t.Repo, err)
			return
		}
		// Every run of the job's tests (the agent's, the gates') goes
		// through the configured driver.
		if d, err = lang.Configure(d, j.tests); err != nil {
			j.err = Permanent(fmt.Errorf("the test settings of %s's %s: %w", t.Repo, j.source, err))
			return
		}
		j.l = d
	})
	if j.err != nil {
		return nil, j.err
	}
	p.progress("setup", "%s: set up %s at %s", j.l.Name(), t.Repo, task.Short(ws.Commit))
	if err := j.l.Setup(ctx, ws.Dir); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("set up %s: %w", t.Repo, ctx.Err())
		}
		// What the repository declares does not install: no retry
		// mends it, and the error says which command failed and how.
		return nil, Permanent(fmt.Errorf("set up the %s repository %s: %w", j.l.Name(), t.Repo, err))
	}
	return j.l, nil
}
