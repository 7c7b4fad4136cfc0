package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// GitLab configures one GitLab instance, gitlab.com or a self-managed one:
// its address, the token redfix acts with, the secret its webhooks carry,
// and which projects and branches are repaired.
type GitLab struct {
	// URL is the instance's base URL (https://gitlab.com by default;
	// https://HOST, or https://HOST/PATH for an instance under a relative
	// URL); the REST API answers under URL/api/v4.
	URL string `yaml:"url"`
	// Token is a project, group or personal access token with the api and
	// write_repository scopes; without it GitLab is not configured.
	Token string `yaml:"token"`
	// WebhookSecret is the secret token the project's or group's webhook
	// sends in X-Gitlab-Token; without it every delivery is refused.
	WebhookSecret string `yaml:"webhook_secret"`
	// Allow, when not empty, narrows the projects whose events are taken
	// (full paths, "group/*" for a group's projects, "group/**" for every
	// project below a group).
	Allow []string `yaml:"allow"`
	// Projects hold per-project settings; the first match wins.
	Projects []GitLabProject `yaml:"projects"`
	// ResyncInterval is how often recent failed pipelines are looked for,
	// in case a webhook's delivery was missed; 0 turns it off.
	ResyncInterval time.Duration `yaml:"resync_interval"`
	// ResyncLookback is how far back the resync looks.
	ResyncLookback time.Duration `yaml:"resync_lookback"`
	// Forks: failed pipelines of merge requests from forks (a source
	// project other than the target), where a project's settings take
	// merge request pipelines, are repaired too. Off by default: a fork's
	// author may not write to the project, yet their commits would spend
	// its repairs and run on redfix's workers.
	Forks bool `yaml:"forks"`
}

// GitLabProject are one project's settings.
type GitLabProject struct {
	// Name is the project's full path, or a pattern as in GitLab.Allow.
	Name string `yaml:"name"`
	// Branches whose failed pipelines are repaired (globs); the project's
	// default branch when empty.
	Branches []string `yaml:"branches"`
	// MergeRequests repairs merge request pipelines too (off by default:
	// their authors are working on them).
	MergeRequests bool `yaml:"merge_requests"`
}

// Enabled reports whether GitLab is configured: a token.
func (g GitLab) Enabled() bool { return g.Token != "" }

// validate checks the section strictly.
func (g GitLab) validate() []error {
	var errs []error
	if err := checkGitLabURL(g.URL); err != nil {
		errs = append(errs, err)
	}
	if g.WebhookSecret != "" && !g.Enabled() {
		errs = append(errs, errors.New("gitlab.webhook_secret needs gitlab.token: the events it lets in are read through the API"))
	}
	for i, p := range append(append([]string(nil), g.Allow...), projectNames(g.Projects)...) {
		if err := checkGitLabPattern(p); err != nil {
			errs = append(errs, fmt.Errorf("gitlab.allow and gitlab.projects[].name (entry %d): %w", i, err))
		}
	}
	if g.ResyncInterval < 0 || g.ResyncInterval > 0 && g.ResyncInterval < 10*time.Second {
		errs = append(errs, fmt.Errorf("gitlab.resync_interval must be 0 (off) or at least 10s, got %s", g.ResyncInterval))
	}
	if g.ResyncLookback < 0 {
		errs = append(errs, fmt.Errorf("gitlab.resync_lookback must not be negative, got %s", g.ResyncLookback))
	}
	return errs
}

func projectNames(ps []GitLabProject) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// checkGitLabURL accepts an http(s) URL of a host, with an optional path,
// and nothing else: no credentials, query or fragment.
func checkGitLabURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("gitlab.url: %w", err)
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("gitlab.url must be an http or https URL, got %q", raw)
	case u.Host == "":
		return fmt.Errorf("gitlab.url names no host: %q", raw)
	case u.User != nil:
		return errors.New("gitlab.url must not hold credentials: set gitlab.token (REDFIX_GITLAB_TOKEN)")
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		return fmt.Errorf("gitlab.url must have no query or fragment, got %q", raw)
	case strings.Contains(strings.TrimSuffix(u.Path, "/"), "/api/v4"):
		return fmt.Errorf("gitlab.url is the instance's address, without /api/v4: got %q", raw)
	}
	return nil
}

// checkGitLabPattern accepts a full path ("group/sub/project") or a
// pattern over one ("group/*", "group/**").
func checkGitLabPattern(p string) error {
	if p != strings.TrimSpace(p) || !strings.Contains(p, "/") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return fmt.Errorf("want a project's full path or a pattern such as group/* or group/**, got %q", p)
	}
	return nil
}
