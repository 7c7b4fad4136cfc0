// Package gitremote is the forge driver of a plain git remote: a git
// server that is no forge redfix speaks (git daemon, git http-backend, a
// self-hosted server without an API redfix knows), serving the
// repositories under the URL prefixes the operator configures.
//
// Its change request is a branch: the fix is pushed to a branch
// redfix/… of the repository (a new delivery of the same failure group is
// one more commit on the same branch), and its description is recorded by
// redfix, where its task is shown, since the remote has no page for it.
// What a plain remote cannot have (comments, labels, reviews, checks,
// outcomes) this driver lacks: consumers asking for those capabilities
// find them absent (pkg/forge).
package gitremote

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/repourl"
)

// Name is the driver's name in the configuration and the logs.
const Name = "git_remote"

// Remote is one configured remote: the repositories whose canonical URL
// starts with Prefix, and what git pushes (and fetches) them with.
type Remote struct {
	// Prefix is an https, http or git URL ending with "/"
	// ("https://git.example/team/"), made canonical by New.
	Prefix string
	// Username and Password (a password or an access token) are sent with
	// HTTP basic authentication; both empty for a remote that asks none
	// (git daemon, an open server).
	Username, Password string
}

// Forge serves the configured remotes' repositories.
type Forge struct {
	remotes []Remote
}

// New checks and registers remotes; the first whose prefix holds a
// repository serves it.
func New(remotes ...Remote) (*Forge, error) {
	f := &Forge{}
	var errs []error
	for i, r := range remotes {
		c, err := Check(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("remote %d: %w", i+1, err))
			continue
		}
		f.remotes = append(f.remotes, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

// Check is r with its prefix canonical, or why it cannot be served: a
// prefix that is not an https, http or git URL of a directory, a username
// without a password (or the reverse), credentials that git's protocol
// cannot carry (git://) or would send in clear (http:// to another host
// than this one).
func Check(r Remote) (Remote, error) {
	p, err := repourl.Prefix(r.Prefix)
	if err != nil {
		return Remote{}, err
	}
	r.Prefix = p
	u, err := url.Parse(p)
	if err != nil {
		return Remote{}, fmt.Errorf("prefix %s: %w", p, err)
	}
	creds := r.Username != "" || r.Password != ""
	switch {
	case u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "git":
		return Remote{}, fmt.Errorf("prefix %s: scheme %s is not served (https, http or git)", p, u.Scheme)
	case (r.Username == "") != (r.Password == ""):
		return Remote{}, fmt.Errorf("prefix %s: a username and a password (or token) go together", p)
	case creds && u.Scheme == "git":
		return Remote{}, fmt.Errorf("prefix %s: git:// carries no credentials; use https, or none", p)
	case creds && u.Scheme == "http" && !loopback(u.Hostname()):
		return Remote{}, fmt.Errorf("prefix %s: credentials would cross the network in clear over http; use https", p)
	case strings.ContainsAny(r.Username, ":\r\n"):
		return Remote{}, fmt.Errorf("prefix %s: the username holds a colon or a line break", p)
	}
	return r, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Name is Name.
func (f *Forge) Name() string { return Name }

// Serves reports whether repo is under a configured prefix's host and
// path (whatever the scheme: a repository's identity has none; which
// URLs of it are reached is Delivers').
func (f *Forge) Serves(repo forge.RepoID) bool {
	_, ok := f.remoteOfID(repo)
	return ok
}

func (f *Forge) remoteOfID(repo forge.RepoID) (Remote, bool) {
	if repo.IsZero() {
		return Remote{}, false
	}
	for _, r := range f.remotes {
		_, rest, _ := strings.Cut(r.Prefix, "://")
		if strings.HasPrefix(strings.ToLower(repo.String()), strings.ToLower(rest)) {
			return r, true
		}
	}
	return Remote{}, false
}

// remoteOf is the remote whose prefix holds repoURL, scheme included.
func (f *Forge) remoteOf(repoURL string) (Remote, bool) {
	c, err := repourl.Canonical(repoURL)
	if err != nil || repourl.IsLocal(c) {
		return Remote{}, false
	}
	for _, r := range f.remotes {
		if strings.HasPrefix(c, r.Prefix) {
			return r, true
		}
	}
	return Remote{}, false
}

// ChangeOf reads nothing: a branch on a plain remote has no web address
// whose outcome redfix could follow.
func (f *Forge) ChangeOf(string) (forge.RepoID, int, bool) { return forge.RepoID{}, 0, false }

// Delivers says whether a fix of the repository at repoURL can be pushed:
// it is under a configured prefix, its scheme included; the error says
// why not.
func (f *Forge) Delivers(repoURL string) error {
	if _, ok := f.remoteOf(repoURL); ok {
		return nil
	}
	prefixes := make([]string, len(f.remotes))
	for i, r := range f.remotes {
		prefixes[i] = r.Prefix
	}
	return fmt.Errorf("%s is under no configured git remote's prefix (%s)", repoURL, strings.Join(prefixes, ", "))
}

// BranchURL is the address of a fix pushed to branch of the repository at
// repoURL: the clone URL, and the branch after a "#".
func (f *Forge) BranchURL(repoURL, branch string) string {
	return repoURL + "#" + branch
}

// GitEnv is the environment that lets one git command reach repoURL with
// its remote's credentials: an HTTP basic Authorization header given
// through GIT_CONFIG_COUNT, in no URL, file or other process's
// environment. It is nil for a URL under no prefix, or a remote without
// credentials.
func (f *Forge) GitEnv(_ context.Context, repoURL string) ([]string, error) {
	r, ok := f.remoteOf(repoURL)
	if !ok || r.Username == "" {
		return nil, nil
	}
	return authEnv(r), nil
}

// Credentials are git's credentials for repo's remote (the first whose
// prefix's host and path hold it).
func (f *Forge) Credentials(_ context.Context, repo forge.RepoID) (forge.Credentials, error) {
	r, ok := f.remoteOfID(repo)
	if !ok {
		return forge.Credentials{}, fmt.Errorf("%s: %w", repo, forge.ErrNotServed)
	}
	return credentials(r), nil
}

// PushCredentials are git's credentials to push to repoURL, scheme
// included.
func (f *Forge) PushCredentials(_ context.Context, repoURL string) (forge.Credentials, error) {
	r, ok := f.remoteOf(repoURL)
	if !ok {
		return forge.Credentials{}, fmt.Errorf("%s: %w", repoURL, forge.ErrNotServed)
	}
	return credentials(r), nil
}

func credentials(r Remote) forge.Credentials {
	if r.Username == "" {
		return forge.Credentials{}
	}
	basic := base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password))
	return forge.Credentials{Env: authEnv(r), Secrets: []string{r.Password, basic}}
}

func authEnv(r Remote) []string {
	basic := base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}
}
