package gitlab

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/redfix/redfix/pkg/forge"
)

// GitAuthEnv is the environment that lets one git process authenticate to
// a GitLab instance over HTTPS with token, as oauth2's password: an
// http.extraHeader passed through GIT_CONFIG_COUNT, so that the token is
// in no URL, no configuration file and no other process's environment.
func GitAuthEnv(token string) []string {
	basic := base64.StdEncoding.EncodeToString([]byte("oauth2:" + token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}
}

// GitEnv is the git credentials for repoURL (forge.CloneAuth): nil for a
// URL that is not one of the instance's projects over its own scheme, so
// that the token is never handed to another host.
func (f *Forge) GitEnv(_ context.Context, repoURL string) ([]string, error) {
	u, err := url.Parse(strings.TrimSpace(repoURL))
	if err != nil || u.Scheme != f.base.Scheme || hostOf(u) != f.Host() || u.User != nil {
		return nil, nil
	}
	repo, err := forge.RepoOf(repoURL)
	if err != nil || !f.Serves(repo) {
		return nil, nil
	}
	return GitAuthEnv(f.token), nil
}

// Credentials are what git pushes to repo with.
func (f *Forge) Credentials(_ context.Context, repo forge.RepoID) (forge.Credentials, error) {
	if _, err := f.project(repo); err != nil {
		return forge.Credentials{}, err
	}
	return forge.Credentials{Env: GitAuthEnv(f.token), Secrets: []string{f.token}, Shapes: tokenShapes}, nil
}

// Repository reads repo's page and default branch.
func (f *Forge) Repository(ctx context.Context, repo forge.RepoID) (forge.Repository, error) {
	path, err := f.project(repo)
	if err != nil {
		return forge.Repository{}, err
	}
	p, _, err := f.c.Projects.GetProject(path, nil, gl.WithContext(ctx))
	if err != nil {
		return forge.Repository{}, fmt.Errorf("read project %s: %w", path, err)
	}
	web := strings.TrimSuffix(p.WebURL, "/")
	if web == "" {
		web = f.WebURL(path)
	}
	return forge.Repository{ID: repo, WebURL: web, DefaultBranch: p.DefaultBranch}, nil
}

// ProjectID is the numeric id of the project at path.
func (f *Forge) ProjectID(ctx context.Context, path string) (int64, error) {
	p, _, err := f.c.Projects.GetProject(path, nil, gl.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("read project %s: %w", path, err)
	}
	return p.ID, nil
}

// CommitURL is a commit's page.
func (f *Forge) CommitURL(r forge.Repository, sha string) string {
	return r.WebURL + "/-/commit/" + url.PathEscape(sha)
}

// TreeURL is the page of a commit's files.
func (f *Forge) TreeURL(r forge.Repository, commit string) string {
	return r.WebURL + "/-/tree/" + url.PathEscape(commit)
}

// FileURL is the page of a file at commit, at line when it is not 0.
func (f *Forge) FileURL(r forge.Repository, commit, path string, line int) string {
	parts := strings.Split(path, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	u := r.WebURL + "/-/blob/" + url.PathEscape(commit) + "/" + strings.Join(parts, "/")
	if line > 0 {
		u += "#L" + strconv.Itoa(line)
	}
	return u
}

// CodeOwnersFiles are where GitLab reads a project's code owners, in the
// order it looks.
func (f *Forge) CodeOwnersFiles() []string {
	return []string{"CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS"}
}
