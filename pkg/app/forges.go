package app

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
)

// forgeDrivers are the forge drivers redfix knows, each made from the
// configuration (nil when the configuration does not name it). The
// registry (forge.Forges) chooses among them, for each repository, the one
// that serves it: a new forge is its driver's package and one line here.
var forgeDrivers = []func(cfg config.Config, log *zap.Logger) (forge.Driver, error){
	func(cfg config.Config, log *zap.Logger) (forge.Driver, error) { return githubDriver(cfg, log) },
}

// newForges is the configuration's forges.
func newForges(cfg config.Config, log *zap.Logger) (*forge.Forges, error) {
	var drivers []forge.Driver
	for _, newDriver := range forgeDrivers {
		d, err := newDriver(cfg, log)
		if err != nil {
			return nil, err
		}
		if d != nil {
			drivers = append(drivers, d)
		}
	}
	return forge.New(drivers...), nil
}

// githubDriver is the GitHub driver of the configuration: nil, as a
// forge.Driver, when no GitHub credentials are configured.
func githubDriver(cfg config.Config, log *zap.Logger) (forge.Driver, error) {
	clients, err := NewGitHubClients(cfg, log.Named("github"))
	if err != nil || clients == nil {
		return nil, err
	}
	return github.NewForge(clients), nil
}

// NewGitHubClients is the configured GitHub's clients, nil when none is
// configured.
func NewGitHubClients(cfg config.Config, log *zap.Logger) (*github.Clients, error) {
	if !cfg.GitHub.Enabled() {
		return nil, nil
	}
	c, err := github.New(github.Config{
		APIURL: cfg.GitHub.APIURL, Token: cfg.GitHub.Token,
		AppID: cfg.GitHub.AppID, PrivateKeyFile: cfg.GitHub.PrivateKeyFile,
		Log: log,
	})
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	return c, nil
}

// githubOf is the GitHub driver among forges; nil when none is registered.
func githubOf(forges *forge.Forges) *github.Forge {
	d, ok := forges.Named(github.Name)
	if !ok {
		return nil
	}
	g, _ := d.(*github.Forge)
	return g
}
