package app

import (
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/command"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge/github/deliveries"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/runreport"
	"github.com/redfix/redfix/pkg/lang/all"
)

// githubFilter is the configuration's repositories and branches.
func githubFilter(cfg config.Config) event.Filter {
	f := event.Filter{Allow: cfg.GitHub.Allow}
	for _, r := range cfg.GitHub.Repositories {
		f.Repositories = append(f.Repositories, event.Repository{
			Name: r.Name, Branches: r.Branches, Artifacts: r.Artifacts, PullRequests: r.PullRequests,
		})
	}
	return f
}

// githubProcessor acts on stored GitHub deliveries; with no GitHub
// credentials configured, a run's delivery is invalid (nothing can read
// the run).
func (s *System) githubProcessor(cfg config.Config, admit command.Admitter) *deliveries.Processor {
	return &deliveries.Processor{
		Filter:    githubFilter(cfg),
		Forge:     s.GitHub,
		Collector: &runreport.Collector{Logs: all.Logs(), Log: s.log.Named("runreport")},
		State:     s.Store,
		Commands:  s.commands(cfg, admit),
		Log:       s.log.Named("github"),
		Outcomes:  s.fixOutcomes(),
	}
}

// commands acts on /redfix commands and on reviews requesting changes on
// GitHub; nil (commands dropped) when review.commands is off or no GitHub
// is configured. admit holds retries to triage's rules.
func (s *System) commands(cfg config.Config, admit command.Admitter) deliveries.Commands {
	if !cfg.Review.Commands || s.GitHub == nil {
		return nil
	}
	return &command.Handler{
		Forge: s.GitHub, State: s.Store, Jobs: s.Jobs, Reverter: s.commandReverter(cfg), Admit: admit,
		MaxRevisions: cfg.Review.MaxRevisions, Log: s.log.Named("commands"),
	}
}

// Resync is the loop that finds failed runs and deliveries the webhooks
// missed; nil with no GitHub credentials or a zero interval.
func (s *System) Resync(cfg config.Config) *deliveries.Resync {
	if s.GitHub == nil || cfg.GitHub.ResyncInterval <= 0 {
		return nil
	}
	filter := githubFilter(cfg)
	if s.GitHub.Clients().App() == nil {
		warnTokenPatterns(filter.Names(), s.log.Named("resync"))
	}
	return &deliveries.Resync{
		Forge:    s.GitHub,
		Names:    filter.Names(),
		Intake:   s.Intake,
		Asked:    s.Store,
		Filter:   filter,
		Lookback: cfg.GitHub.ResyncLookback,
		Log:      s.log.Named("resync"),
		// The bot's replicas resync once per interval between them.
		Turns: s.Store,
		Owner: processOwner(),
	}
}

// warnTokenPatterns says, at warn level, what a resync with a plain token
// cannot look at: a token lists no repositories, so the resync asks for
// each repository named in full, and a pattern (acme/*) names none. With
// only patterns it looks at nothing at all.
func warnTokenPatterns(names []string, log *zap.Logger) {
	var patterns, full []string
	for _, n := range names {
		if strings.ContainsAny(n, "*?[") {
			patterns = append(patterns, n)
		} else if strings.Contains(n, "/") {
			full = append(full, n)
		}
	}
	switch {
	case len(patterns) > 0 && len(full) == 0:
		log.Warn("the resync looks at no repository: with a plain token it cannot list the repositories a pattern matches; name them in full in github.allow or github.repositories, or use a GitHub App",
			zap.Strings("patterns", patterns))
	case len(patterns) > 0:
		log.Warn("the resync looks only at the repositories named in full: with a plain token it cannot list the repositories a pattern matches; name them, or use a GitHub App",
			zap.Strings("patterns", patterns), zap.Strings("looked_at", full))
	case len(full) == 0:
		log.Warn("the resync looks at no repository: with a plain token it asks for the repositories named in github.allow or github.repositories, and none is")
	}
}
