package app

import (
	"context"
	"path"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/repourl"
)

// NewRepoPolicies reads each repository's .redfix.yaml from the mirrors,
// capped by cfg, and reports an invalid one as a check on the commit when
// the repository is on a configured forge that has checks.
func NewRepoPolicies(cfg config.Config, forges *forge.Forges, mirrors repoconfig.Mirrors, log *zap.Logger) *repoconfig.Loader {
	forks := newForkOptIns(cfg, forges)
	l := &repoconfig.Loader{Mirrors: mirrors, Central: func(repo string) repoconfig.Central { return centralPolicy(cfg, forks, repo) }, Log: log}
	if len(forges.Drivers()) > 0 {
		l.Report = invalidFileCheck{forges: forges}
	}
	return l
}

// centralPolicy is what the central configuration allows repo: the
// ceiling of its .redfix.yaml, forks as its forge's setting says.
func centralPolicy(cfg config.Config, forks forkOptIns, repo string) repoconfig.Central {
	handled, _ := forks.ForksHandled(repo)
	c := repoconfig.Central{Enabled: true, RepairsPerDay: cfg.Triage.DailyJobs, Forks: handled, Revert: centralRevert(cfg)}
	for _, o := range cfg.Triage.OptOut {
		if sameRepo(o, repo) {
			c.Enabled = false
		}
	}
	for k, n := range cfg.Triage.DailyJobsByRepo {
		if sameRepo(k, repo) {
			c.RepairsPerDay = n
		}
	}
	if t, ok := cfg.Languages.TestsFor(repo); ok {
		c.Tests, c.TestsLocked = t.Settings, t.Locked
	}
	for _, r := range cfg.Languages.Repos {
		if ok, _ := path.Match(r.Pattern, repo); ok {
			c.Driver = r.Driver
			break
		}
	}
	return c
}

// centralRevert is the central revert policy (the revert: section) that a
// .redfix.yaml's revert: narrows.
func centralRevert(cfg config.Config) repoconfig.RevertPolicy {
	return repoconfig.RevertPolicy{Enabled: cfg.Revert.Enabled, MaxAge: cfg.Revert.MaxAge}
}

func sameRepo(a, b string) bool {
	ca, err1 := repourl.Canonical(a)
	cb, err2 := repourl.Canonical(b)
	if err1 != nil || err2 != nil {
		return strings.EqualFold(strings.TrimSuffix(strings.TrimRight(a, "/"), ".git"), strings.TrimSuffix(strings.TrimRight(b, "/"), ".git"))
	}
	return ca == cb
}

// invalidFileCheck reports an invalid .redfix.yaml as a check on the
// commit, where the repository's team sees it.
type invalidFileCheck struct{ forges *forge.Forges }

func (c invalidFileCheck) ReportInvalid(ctx context.Context, repo, commit string, problem error) error {
	d, id, err := c.forges.ForURL(repo)
	if err != nil {
		return nil // a repository elsewhere: the log line is the report
	}
	w, ok := d.(forge.CheckWriter)
	if !ok {
		return nil // a forge without checks: the log line is the report
	}
	title, summary := repoconfig.InvalidSummary(commit, problem)
	_, err = forge.UpsertCheck(ctx, w, id, forge.Check{
		Name: repoconfig.CheckName, Commit: commit, Conclusion: forge.ConclusionActionRequired, Title: title, Summary: summary,
	})
	return err
}
