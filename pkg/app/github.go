package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/command"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/deliveries"
	"github.com/redfix/redfix/pkg/gh/event"
	"github.com/redfix/redfix/pkg/gh/runreport"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/workspace"
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

// errNoGitHub is the answer for a run delivered while no GitHub credentials
// are configured: nothing can read the run.
var errNoGitHub = errors.New("GitHub credentials are not configured (REDFIX_GITHUB_TOKEN, or REDFIX_GITHUB_APP_ID and REDFIX_GITHUB_PRIVATE_KEY_FILE)")

// githubProcessor acts on stored GitHub deliveries.
func (s *System) githubProcessor(cfg config.Config, admit command.Admitter) *deliveries.Processor {
	client := s.GitHubClient
	if client == nil {
		client = func(context.Context, string, string) (*github.Client, error) {
			return nil, fmt.Errorf("%w: %w", ingest.ErrInvalid, errNoGitHub)
		}
	}
	return &deliveries.Processor{
		Filter:    githubFilter(cfg),
		Client:    client,
		Collector: &runreport.Collector{Log: s.log.Named("runreport")},
		State:     s.Store,
		Commands:  s.commands(cfg, admit),
		Log:       s.log.Named("github"),
		Outcomes:  s.fixOutcomes(),
	}
}

// commands acts on /redfix commands and on reviews requesting changes;
// nil (commands dropped) when review.commands is off or no GitHub is
// configured. admit holds retries to triage's rules.
func (s *System) commands(cfg config.Config, admit command.Admitter) deliveries.Commands {
	if !cfg.Review.Commands || s.GitHub == nil {
		return nil
	}
	return &command.Handler{
		GitHub: s.GitHub, State: s.Store, Jobs: s.Jobs, Reverter: s.commandReverter(cfg), Admit: admit,
		MaxRevisions: cfg.Review.MaxRevisions, Log: s.log.Named("commands"),
	}
}

// startGitHub makes the GitHub clients when credentials are configured.
func (s *System) startGitHub(cfg config.Config) error {
	clients, err := NewGitHubClients(cfg, s.log.Named("github"))
	if err != nil || clients == nil {
		return err
	}
	s.GitHub = clients
	s.GitHubClient = func(ctx context.Context, owner, repo string) (*github.Client, error) {
		c, err := clients.ForRepo(ctx, owner, repo)
		if err != nil {
			return nil, err
		}
		return c.Client, nil
	}
	return nil
}

// Resync is the loop that finds failed runs and deliveries the webhooks
// missed; nil with no GitHub credentials or a zero interval.
func (s *System) Resync(cfg config.Config) *deliveries.Resync {
	if s.GitHub == nil || cfg.GitHub.ResyncInterval <= 0 {
		return nil
	}
	filter := githubFilter(cfg)
	clients := s.GitHub
	if clients.App() == nil {
		warnTokenPatterns(filter.Names(), s.log.Named("resync"))
	}
	return &deliveries.Resync{
		Repos: func(ctx context.Context) ([]*github.Repository, error) {
			return clients.Repositories(ctx, filter.Names())
		},
		Client:   s.GitHubClient,
		App:      clients.App(),
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

// ownMirrors is a cache of mirrors of its own for one part of the process
// (triage, reverts, the keeper), beside the workers' in a directory named
// for it: a mirror cache tracks the work trees in use in its own process
// only, so two caches never share a directory.
func ownMirrors(cfg config.Config, clients *gh.Clients, part string) *workspace.Mirrors {
	dir := cfg.Checkouts.MirrorDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "mirrors")
	}
	cfg.Checkouts.MirrorDir = filepath.Clean(dir) + "-" + part
	return NewMirrors(cfg, clients)
}

// NewGitHubClients is the configured GitHub's clients, nil when none is
// configured.
func NewGitHubClients(cfg config.Config, log *zap.Logger) (*gh.Clients, error) {
	if !cfg.GitHub.Enabled() {
		return nil, nil
	}
	c, err := gh.New(gh.Config{
		APIURL: cfg.GitHub.APIURL, Token: cfg.GitHub.Token,
		AppID: cfg.GitHub.AppID, PrivateKeyFile: cfg.GitHub.PrivateKeyFile,
		Log: log,
	})
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	return c, nil
}
