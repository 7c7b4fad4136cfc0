package config

import (
	"fmt"
	"strings"
	"time"
)

// GitHubEvents configures what redfix does with GitHub's events: which
// repositories and branches it repairs, where it finds their test reports,
// and how often it looks for what its webhooks missed.
type GitHubEvents struct {
	// Allow, when not empty, narrows the repositories accepted through
	// verified webhooks ("owner/name" or "owner/*"). Empty: every
	// repository whose webhook is signed with the secret.
	Allow []string `yaml:"allow"`
	// Repositories hold per-repository settings.
	Repositories []RepositoryEvents `yaml:"repositories"`
	// ResyncInterval is how often the resync looks for failed runs and
	// failed deliveries that were missed; 0 turns it off.
	ResyncInterval time.Duration `yaml:"resync_interval"`
	// ResyncLookback is how far back it looks (GitHub keeps failed
	// deliveries for 3 days).
	ResyncLookback time.Duration `yaml:"resync_lookback"`
	// Forks: failed runs of pull requests from forks (a head repository
	// other than the repository) are repaired too. Off by default: a
	// fork's author may not write to the repository, yet their commits
	// would spend its repairs and run on redfix's workers.
	Forks bool `yaml:"forks"`
}

// RepositoryEvents are one repository's settings.
type RepositoryEvents struct {
	// Name is "owner/name"; "owner/*" matches an owner's repositories.
	Name string `yaml:"name"`
	// Branches whose red runs are repaired (globs); the default branch
	// when empty.
	Branches []string `yaml:"branches"`
	// Artifacts are globs over the names of the artifacts that hold test
	// reports; every artifact when empty.
	Artifacts []string `yaml:"artifacts"`
	// PullRequests repairs runs on pull-request branches too.
	PullRequests bool `yaml:"pull_requests"`
}

func (e GitHubEvents) validate() []error {
	var errs []error
	for i, r := range e.Repositories {
		if !strings.Contains(r.Name, "/") {
			errs = append(errs, fmt.Errorf("github.repositories[%d].name must be owner/name or owner/*, got %q", i, r.Name))
		}
	}
	if e.ResyncInterval < 0 || e.ResyncInterval > 0 && e.ResyncInterval < 10*time.Second {
		errs = append(errs, fmt.Errorf("github.resync_interval must be 0 (off) or at least 10s, got %s", e.ResyncInterval))
	}
	return errs
}

// commaList splits a comma-separated environment value.
func commaList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
