package app

import (
	"testing"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/gitlab"
)

// TestForkOptInsFollowTheRepositorysForge: a repository's forks are
// handled as its forge's setting says (github.forks, gitlab.forks), each
// named in the refusal; one no forge serves follows github.forks; and the
// central policy a .redfix.yaml narrows carries the same answer.
func TestForkOptInsFollowTheRepositorysForge(t *testing.T) {
	gh, err := github.New(github.Config{Token: "ghp-test"})
	if err != nil {
		t.Fatal(err)
	}
	lab, err := gitlab.New(gitlab.Config{URL: "https://git.example.com/gitlab", Token: "glpat-test"})
	if err != nil {
		t.Fatal(err)
	}
	forges := forge.New(github.NewForge(gh), lab)
	const (
		onGitHub = "https://github.com/acme/shop.git"
		onGitLab = "https://git.example.com/gitlab/acme/payments/ledger.git"
		nowhere  = "https://git.elsewhere.example/acme/tool.git"
	)
	for _, c := range []struct {
		github, gitlab bool
		repo           string
		want           bool
		setting        string
	}{
		{github: true, repo: onGitHub, want: true, setting: "github.forks"},
		{github: true, repo: onGitLab, want: false, setting: "gitlab.forks"},
		{gitlab: true, repo: onGitLab, want: true, setting: "gitlab.forks"},
		{gitlab: true, repo: onGitHub, want: false, setting: "github.forks"},
		{gitlab: true, repo: nowhere, want: false, setting: "github.forks"},
		{github: true, repo: nowhere, want: true, setting: "github.forks"},
	} {
		cfg := config.Default()
		cfg.GitHub.Forks, cfg.GitLab.Forks = c.github, c.gitlab
		opt := newForkOptIns(cfg, forges)
		got, setting := opt.ForksHandled(c.repo)
		if got != c.want || setting != c.setting {
			t.Errorf("github.forks %v, gitlab.forks %v, %s: %v (%s), want %v (%s)", c.github, c.gitlab, c.repo, got, setting, c.want, c.setting)
		}
		if central := centralPolicy(cfg, opt, c.repo); central.Forks != c.want {
			t.Errorf("github.forks %v, gitlab.forks %v, %s: the central policy's forks %v, want %v", c.github, c.gitlab, c.repo, central.Forks, c.want)
		}
	}
}
