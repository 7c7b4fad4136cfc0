package app

import (
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/command"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/deliveries"
	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/forge/gitlab/webhook"
	"github.com/redfix/redfix/pkg/lang/all"
	"github.com/redfix/redfix/pkg/triage"
)

// gitlabDriver is the GitLab driver of the configuration: nil, as a
// forge.Driver, when no GitLab token is configured.
func gitlabDriver(cfg config.Config, log *zap.Logger) (forge.Driver, error) {
	if !cfg.GitLab.Enabled() {
		return nil, nil
	}
	d, err := gitlab.New(gitlab.Config{URL: cfg.GitLab.URL, Token: cfg.GitLab.Token, Logs: all.Logs(), Log: log.Named("gitlab")})
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	return d, nil
}

// gitlabOf is the GitLab driver among forges; nil when none is registered.
func gitlabOf(forges *forge.Forges) *gitlab.Forge {
	d, ok := forges.Named(gitlab.Name)
	if !ok {
		return nil
	}
	g, _ := d.(*gitlab.Forge)
	return g
}

// gitlabFilter is the configuration's projects and branches.
func gitlabFilter(cfg config.Config) event.Filter {
	f := event.Filter{Allow: cfg.GitLab.Allow}
	for _, p := range cfg.GitLab.Projects {
		f.Projects = append(f.Projects, event.Project{Name: p.Name, Branches: p.Branches, MergeRequests: p.MergeRequests})
	}
	return f
}

// gitlabWebhook is GitLab's webhook endpoint, served whether or not a
// token is configured: without a secret it refuses every delivery, and a
// pipeline's stored without a token is refused when it is processed.
func (s *System) gitlabWebhook(cfg config.Config) http.Handler {
	return webhook.NewHandler(cfg.GitLab.WebhookSecret, cfg.GitLab.URL, s.Intake, gitlabFilter(cfg), s.log.Named("gitlab-webhook"))
}

// gitlabProcessor acts on stored GitLab deliveries.
func (s *System) gitlabProcessor(cfg config.Config, admit command.Admitter) triage.Events {
	p := &deliveries.Processor{
		Filter: gitlabFilter(cfg), Forge: s.GitLab, State: s.Store, Log: s.log.Named("gitlab"),
	}
	if c := s.gitlabCommands(cfg, admit); c != nil {
		p.Commands = c
	}
	if v := s.verdicts(); v != nil {
		p.Outcomes = v
	}
	return p
}

// gitlabCommands acts on /redfix notes in merge requests on GitLab; nil
// when review.commands is off or no GitLab is configured. redfix's own
// notes (the token's account) are never taken as commands.
func (s *System) gitlabCommands(cfg config.Config, admit command.Admitter) *command.Handler {
	if !cfg.Review.Commands || s.GitLab == nil {
		return nil
	}
	return &command.Handler{
		Forge: s.GitLab, State: s.Store, Jobs: s.Jobs, Reverter: s.commandReverter(cfg), Admit: admit,
		MaxRevisions: cfg.Review.MaxRevisions, Log: s.log.Named("commands"),
	}
}

// GitLabResync is the loop that finds failed pipelines the webhook missed;
// nil with no GitLab token or a zero interval.
func (s *System) GitLabResync(cfg config.Config) *deliveries.Resync {
	if s.GitLab == nil || cfg.GitLab.ResyncInterval <= 0 {
		return nil
	}
	filter := gitlabFilter(cfg)
	return &deliveries.Resync{
		Forge: s.GitLab, Projects: filter.Names(), Intake: s.Intake, Filter: filter, Lookback: cfg.GitLab.ResyncLookback,
		Log: s.log.Named("gitlab-resync"), Turns: s.Store, Owner: processOwner(),
	}
}
