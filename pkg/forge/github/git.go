package github

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/redfix/redfix/pkg/forge"
)

// GitEnv is the environment that lets one git process authenticate to the
// repository's HTTPS remote with the client's token: an http.extraHeader
// passed through GIT_CONFIG_COUNT, so the token is in no URL, no
// configuration file and no other process's environment.
func (c *Client) GitEnv(ctx context.Context) ([]string, error) {
	tok, err := c.Token(ctx)
	if err != nil {
		return nil, fmt.Errorf("github token for git: %w", err)
	}
	return GitAuthEnv(tok), nil
}

// GitAuthEnv is GitEnv for a given token.
func GitAuthEnv(token string) []string {
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}
}

// Serves reports whether repoURL is a repository of the configured GitHub
// (its host is the API's, or github.com for the public API), so that its
// token is never handed to another host.
func (c *Clients) Serves(repoURL string) bool {
	u, err := url.Parse(strings.TrimSpace(repoURL))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return false
	}
	api, err := url.Parse(c.baseURL)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, api.Host) && u.Scheme == api.Scheme {
		return true
	}
	return strings.EqualFold(api.Host, "api.github.com") && strings.EqualFold(u.Host, "github.com") && u.Scheme == "https"
}

// GitEnvFor is the git credentials for repoURL: nil for a repository that
// is not the configured GitHub's (its host and scheme, a path of owner and
// name).
func (c *Clients) GitEnvFor(ctx context.Context, repoURL string) ([]string, error) {
	if !c.Serves(repoURL) {
		return nil, nil
	}
	repo, err := forge.RepoOf(repoURL)
	parts := repo.Segments()
	if err != nil || len(parts) != 2 {
		return nil, nil // no repository of GitHub's: owner/name
	}
	cl, err := c.ForRepo(ctx, parts[0], parts[1])
	if err != nil {
		return nil, err
	}
	return cl.GitEnv(ctx)
}
