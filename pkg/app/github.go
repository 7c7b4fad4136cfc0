package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/deliveries"
	"github.com/redfix/redfix/pkg/gh/event"
	"github.com/redfix/redfix/pkg/gh/runreport"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/task"
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
func (s *System) githubProcessor(cfg config.Config) *deliveries.Processor {
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
		Log:       s.log.Named("github"),
	}
}

// PullRequestRef names a pull request by its web address:
// https://HOST/OWNER/NAME/pull/N (github.com or GitHub Enterprise Server).
func PullRequestRef(u string) (repo string, number int, ok bool) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "https" && pu.Scheme != "http" {
		return "", 0, false
	}
	parts := strings.Split(strings.Trim(pu.Path, "/"), "/")
	if len(parts) < 4 || parts[len(parts)-2] != "pull" {
		return "", 0, false
	}
	n, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return parts[len(parts)-4] + "/" + parts[len(parts)-3], n, true
}

// fixRecorder records each task published as a pull request on GitHub as
// a fix whose outcome the webhooks then follow.
type fixRecorder struct {
	tasks interface {
		SaveTask(ctx context.Context, t task.Task) error
	}
	fixes interface {
		RecordPublished(ctx context.Context, f task.Fix) (bool, error)
	}
	log *zap.Logger
}

func (r fixRecorder) SaveTask(ctx context.Context, t task.Task) error {
	if err := r.tasks.SaveTask(ctx, t); err != nil {
		return err
	}
	if t.Status != task.StatusPublished {
		return nil
	}
	repo, n, ok := PullRequestRef(t.PullRequest)
	if !ok {
		return nil // a local pull request: no outcome to follow
	}
	created, err := r.fixes.RecordPublished(ctx, task.Fix{Repo: repo, Number: n, URL: t.PullRequest, TaskID: t.ID, Fingerprint: t.Fingerprint})
	if err != nil {
		return fmt.Errorf("record fix %s: %w", t.PullRequest, err)
	}
	if created {
		r.log.Info("fix published; following its outcome", zap.String("task_id", t.ID), zap.String("pull_request", t.PullRequest))
	}
	return nil
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
	}
}

// triageMirrors are triage's own mirrors, beside the workers' (a mirror
// cache tracks the work trees in use in its own process only, so two
// caches never share a directory).
func triageMirrors(cfg config.Config, clients *gh.Clients) *workspace.Mirrors {
	dir := cfg.Checkouts.MirrorDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "mirrors")
	}
	cfg.Checkouts.MirrorDir = filepath.Clean(dir) + "-triage"
	return NewMirrors(cfg, clients)
}
