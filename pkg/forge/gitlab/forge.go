// Package gitlab is the GitLab forge driver (forge.Driver, and every
// capability the consumers declare): what redfix does on one GitLab
// instance, gitlab.com or a self-managed one, in pkg/forge's words,
// through GitLab's official Go client, whose types never leave this
// package and the packages below it.
//
// A repository is GitLab's when it is on the configured instance's host
// (under its path, for an instance served under a relative URL) and its
// path has a namespace and a name, nested groups kept
// ("acme/payments/ledger"). Projects are addressed by that path, URL
// encoded, as the API takes them. A merge request is a change request, a
// note is a comment, a member's access level is the permission (Developer
// or higher may write), a commit status is a check, and git reaches the
// repositories over HTTPS with the token as oauth2's password.
package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	gl "gitlab.com/gitlab-org/api/client-go/v2"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
)

// Name is the GitLab driver's name, in the configuration and as the kind
// of its events on the reports stream.
const Name = "gitlab"

// Config is what the driver needs: the instance and the token.
type Config struct {
	// URL is the instance's base URL (https://gitlab.com); the API is
	// under URL/api/v4.
	URL string
	// Token is a project, group or personal access token (api and
	// write_repository scopes).
	Token string
	// HTTPClient, when set, carries the API's requests (nil: a pooled
	// client of the library's).
	HTTPClient *http.Client
	// Logs reads the logs of failed jobs that left no report (nil: they
	// are not read).
	Logs LogReader
	Log  *zap.Logger
}

// Forge is one GitLab instance as a forge driver.
type Forge struct {
	c     *gl.Client
	base  *url.URL // the instance's web address, without a trailing "/"
	token string
	logs  LogReader
	log   *zap.Logger

	mu sync.Mutex
	// statuses remembers the commit and name of the statuses this process
	// created or listed: GitLab sets a status by commit and name, never by
	// its id (see UpdateCheck).
	statuses map[int64]statusRef
	// self is the token's own account, once read.
	self string
}

// New is the driver of the configured instance.
func New(cfg Config) (*Forge, error) {
	if cfg.Token == "" {
		return nil, errors.New("gitlab: no token")
	}
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("gitlab: the instance URL %q is not an http(s) URL of a host", cfg.URL)
	}
	opts := []gl.ClientOptionFunc{gl.WithBaseURL(base.String() + "/api/v4")}
	if cfg.HTTPClient != nil {
		opts = append(opts, gl.WithHTTPClient(cfg.HTTPClient))
	}
	c, err := gl.NewClient(cfg.Token, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitlab: client of %s: %w", base, err)
	}
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	base.Host = strings.ToLower(base.Host)
	return &Forge{c: c, base: base, token: cfg.Token, logs: cfg.Logs, log: log, statuses: map[int64]statusRef{}}, nil
}

// Name is Name.
func (f *Forge) Name() string { return Name }

// Host is where the instance serves its repositories.
func (f *Forge) Host() string { return hostOf(f.base) }

// hostOf is u's host as forge.RepoOf writes it: lower case, without the
// scheme's default port.
func hostOf(u *url.URL) string {
	h := strings.ToLower(u.Host)
	if u.Scheme == "https" {
		h = strings.TrimSuffix(h, ":443")
	}
	if u.Scheme == "http" {
		h = strings.TrimSuffix(h, ":80")
	}
	return h
}

// prefix is the instance's own path ("" for one at the root of its host),
// which every project's path on the host starts with.
func (f *Forge) prefix() string { return strings.Trim(f.base.Path, "/") }

// Serves reports whether repo is a project of the configured instance: its
// host, under its path, with a namespace and a name.
func (f *Forge) Serves(repo forge.RepoID) bool {
	_, err := f.project(repo)
	return err == nil
}

// project is repo's full path on the instance ("acme/payments/ledger").
func (f *Forge) project(repo forge.RepoID) (string, error) {
	if !strings.EqualFold(repo.Host, f.Host()) {
		return "", fmt.Errorf("%s: %w", repo, forge.ErrNotServed)
	}
	p := repo.Path
	if pre := f.prefix(); pre != "" {
		rest, ok := strings.CutPrefix(p, pre+"/")
		if !ok {
			return "", fmt.Errorf("%s: not under the instance's path %s: %w", repo, pre, forge.ErrNotServed)
		}
		p = rest
	}
	s := strings.Split(p, "/")
	if len(s) < 2 || strings.Contains(p, "//") || s[0] == "" || s[len(s)-1] == "" || s[0] == "-" {
		return "", fmt.Errorf("%s: a GitLab project's path is namespace/name: %w", repo, forge.ErrNotServed)
	}
	return p, nil
}

// Repo is the identity of the project at path on this instance.
func (f *Forge) Repo(path string) forge.RepoID {
	p := path
	if pre := f.prefix(); pre != "" {
		p = pre + "/" + path
	}
	return forge.RepoID{Host: f.Host(), Path: p}
}

// WebURL is the page of the project at path.
func (f *Forge) WebURL(path string) string { return f.base.String() + "/" + path }

// CloneURL is where git reaches the project at path.
func (f *Forge) CloneURL(path string) string { return f.WebURL(path) + ".git" }

// ChangeOf reads a merge request's page: BASE/PATH/-/merge_requests/N.
func (f *Forge) ChangeOf(u string) (forge.RepoID, int, bool) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != f.base.Scheme || hostOf(pu) != f.Host() {
		return forge.RepoID{}, 0, false
	}
	path, num, ok := strings.Cut(strings.Trim(pu.Path, "/"), "/-/merge_requests/")
	if !ok {
		return forge.RepoID{}, 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return forge.RepoID{}, 0, false
	}
	repo := forge.RepoID{Host: f.Host(), Path: path}
	if _, err := f.project(repo); err != nil {
		return forge.RepoID{}, 0, false
	}
	return repo, n, true
}

// FixKey is the key a published fix of repo is kept under in the store:
// the host and the full path, so that a GitLab project and a GitHub
// repository of the same path are never taken for one another.
func (f *Forge) FixKey(repo forge.RepoID) string { return repo.String() }

// tokenShapes matches GitLab's token formats (personal, project and group
// access tokens, deploy, trigger, runner, OAuth and CI job tokens).
var tokenShapes = regexp.MustCompile(`\bgl(?:pat|dt|ptt|rt|oas|cbt|soat|ffct|agent|imt|ft|sst|rtr)-[A-Za-z0-9_.\-]{20,}`)

// Self is the login of the account the token belongs to (redfix's own),
// read once; "" when it cannot be read.
func (f *Forge) Self(ctx context.Context) string {
	f.mu.Lock()
	self := f.self
	f.mu.Unlock()
	if self != "" {
		return self
	}
	u, _, err := f.c.Users.CurrentUser(gl.WithContext(ctx))
	if err != nil {
		f.log.Warn("read the token's own account", zap.Error(err))
		return ""
	}
	f.mu.Lock()
	f.self = u.Username
	f.mu.Unlock()
	return u.Username
}

// botLogin matches the accounts GitLab makes for project and group access
// tokens.
var botLogin = regexp.MustCompile(`^(?:project|group)_\d+_bot(?:_[0-9a-f]+)?$`)

// UserOf is a GitLab account in the forge's words: one GitLab made for an
// access token is a bot.
func UserOf(login string) forge.User {
	return forge.User{Login: login, Bot: botLogin.MatchString(login)}
}
