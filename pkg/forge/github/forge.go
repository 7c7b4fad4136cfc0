package github

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/forge"
)

// Name is the GitHub driver's name, in the configuration and as the kind
// of its deliveries on the reports stream.
const Name = "github"

// Forge is GitHub as a forge driver (forge.Driver): what redfix does on
// GitHub, in the forge's words, through the clients of one configured
// GitHub (github.com or a GitHub Enterprise Server). A repository is
// GitHub's when it is on the configured host and its path is owner/name.
type Forge struct {
	c *Clients
	// host is where the repositories are served: the API's host, or
	// github.com for the public API.
	host string
}

// NewForge is the driver of the clients' GitHub.
func NewForge(c *Clients) *Forge {
	f := &Forge{c: c}
	if u, err := url.Parse(c.baseURL); err == nil {
		f.host = strings.ToLower(u.Host)
		if f.host == "api.github.com" {
			f.host = "github.com"
		}
	}
	return f
}

// Clients are the driver's clients.
func (f *Forge) Clients() *Clients { return f.c }

// Name is Name.
func (f *Forge) Name() string { return Name }

// Host is where the driver's repositories are served.
func (f *Forge) Host() string { return f.host }

// Serves reports whether repo is on the configured GitHub: its host, and a
// path of an owner and a name.
func (f *Forge) Serves(repo forge.RepoID) bool {
	_, _, err := f.ownerName(repo)
	return err == nil
}

// Repo is the identity of the repository owner/name on this GitHub.
func (f *Forge) Repo(fullName string) forge.RepoID {
	return forge.RepoID{Host: f.host, Path: fullName}
}

// ownerName are repo's owner and name on this GitHub.
func (f *Forge) ownerName(repo forge.RepoID) (owner, name string, err error) {
	if f.host == "" || !strings.EqualFold(repo.Host, f.host) {
		return "", "", fmt.Errorf("%s: %w", repo, forge.ErrNotServed)
	}
	s := repo.Segments()
	if len(s) != 2 || s[0] == "" || s[1] == "" {
		return "", "", fmt.Errorf("%s: a GitHub repository's path is owner/name: %w", repo, forge.ErrNotServed)
	}
	return s[0], s[1], nil
}

// client is the client for repo, and its owner and name.
func (f *Forge) client(ctx context.Context, repo forge.RepoID) (*Client, string, string, error) {
	owner, name, err := f.ownerName(repo)
	if err != nil {
		return nil, "", "", err
	}
	cl, err := f.c.ForRepo(ctx, owner, name)
	if err != nil {
		return nil, "", "", err
	}
	return cl, owner, name, nil
}

// ChangeOf reads a pull request's page, https://HOST/OWNER/NAME/pull/N.
func (f *Forge) ChangeOf(u string) (forge.RepoID, int, bool) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "https" && pu.Scheme != "http" || !strings.EqualFold(pu.Host, f.host) {
		return forge.RepoID{}, 0, false
	}
	parts := strings.Split(strings.Trim(pu.Path, "/"), "/")
	if len(parts) != 4 || parts[2] != "pull" || parts[0] == "" || parts[1] == "" {
		return forge.RepoID{}, 0, false
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n <= 0 {
		return forge.RepoID{}, 0, false
	}
	return f.Repo(parts[0] + "/" + parts[1]), n, true
}

// GitEnv is the git credentials for repoURL (forge.CloneAuth): nil for a
// URL that is not the configured GitHub's, over its scheme.
func (f *Forge) GitEnv(ctx context.Context, repoURL string) ([]string, error) {
	return f.c.GitEnvFor(ctx, repoURL)
}

// Repository reads repo's page and default branch.
func (f *Forge) Repository(ctx context.Context, repo forge.RepoID) (forge.Repository, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return forge.Repository{}, err
	}
	info, _, err := cl.Repositories.Get(ctx, owner, name)
	if err != nil {
		return forge.Repository{}, fmt.Errorf("read %s/%s: %w", owner, name, err)
	}
	return forge.Repository{ID: repo, WebURL: strings.TrimSuffix(info.GetHTMLURL(), "/"), DefaultBranch: info.GetDefaultBranch()}, nil
}

// tokenShapes matches GitHub's token formats.
var tokenShapes = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)

// Credentials are what git pushes to repo with: the installation's (or
// the token's) token, in an http.extraHeader of the command's own.
func (f *Forge) Credentials(ctx context.Context, repo forge.RepoID) (forge.Credentials, error) {
	cl, _, _, err := f.client(ctx, repo)
	if err != nil {
		return forge.Credentials{}, err
	}
	token, err := cl.Token(ctx)
	if err != nil {
		return forge.Credentials{}, fmt.Errorf("github token for %s: %w", repo, err)
	}
	return forge.Credentials{Env: GitAuthEnv(token), Secrets: []string{token}, Shapes: tokenShapes}, nil
}

// CommitURL is a commit's page.
func (f *Forge) CommitURL(r forge.Repository, sha string) string { return r.WebURL + "/commit/" + sha }

// TreeURL is the page of a commit's files.
func (f *Forge) TreeURL(r forge.Repository, commit string) string {
	return r.WebURL + "/tree/" + commit
}

// FileURL is the page of a file at commit, at line when it is not 0.
func (f *Forge) FileURL(r forge.Repository, commit, path string, line int) string {
	u := r.WebURL + "/blob/" + url.PathEscape(commit) + "/" + pathEscape(path)
	if line > 0 {
		u += "#L" + strconv.Itoa(line)
	}
	return u
}

// pathEscape escapes each segment of a slash-separated path for a URL.
func pathEscape(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// CodeOwnersFiles are where GitHub reads a repository's code owners, in
// the order it looks.
func (f *Forge) CodeOwnersFiles() []string {
	return []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}
}
