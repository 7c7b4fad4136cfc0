package app

import (
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/workspace"
)

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

// NewMirrors is the workers' cache of repository mirrors; with GitHub
// configured, git authenticates to its repositories with their
// installation's token.
func NewMirrors(cfg config.Config, clients *gh.Clients) *workspace.Mirrors {
	dir := cfg.Checkouts.MirrorDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "mirrors")
	}
	m := &workspace.Mirrors{Dir: dir, MaxBytes: cfg.Checkouts.MaxMirrorBytes}
	if clients != nil {
		m.Auth = clients.GitEnvFor
	}
	return m
}
