// Package fakeforge is a forge that exists only in the tests: a driver of
// its own (not GitHub's), whose repositories are bare git repositories in
// a directory, reached by git through a rewrite of their URLs that its
// credentials carry, and whose change requests, comments, people and
// checks are held in memory. Its paths nest ("group/subgroup/name"), as
// GitLab's do. It passes the forge drivers' conformance suite and is
// registered with one line, which shows the seam: nothing outside
// pkg/forge/github knows GitHub, and a forge is one package.
package fakeforge

import (
	"context"
	"encoding/base64"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/redfix/redfix/pkg/forge"
)

// Name is the driver's name.
const Name = "fake"

// Host is where the fake forge serves its repositories.
const Host = "forge.fake.invalid"

// Forge is the fake forge's driver.
type Forge struct {
	dir   string // the bare repositories, by path
	token string

	mu     sync.Mutex
	repos  map[string]*repo  // by lower-cased path
	users  map[string]string // login → e-mail
	nextID int64
}

// repo is a repository's state beside its git repository.
type repo struct {
	id      forge.RepoID
	changes []*change
	perms   map[string]bool // login → may write
	checks  map[string][]*forge.CheckState
}

// change is a change request and what was done to it.
type change struct {
	forge.ChangeRequest
	labels, reviewers []string
	comments          []*comment
}

// comment is a comment in a change request's thread.
type comment struct {
	id     int64
	author string
	body   string
	acked  bool
}

// New is a fake forge keeping its repositories under dir.
func New(dir string) *Forge {
	return &Forge{dir: dir, token: "fake-forge-token-0123456789", repos: map[string]*repo{}, users: map[string]string{}}
}

// Name is Name.
func (f *Forge) Name() string { return Name }

// Serves reports whether repo is on the fake forge's host and was made
// there.
func (f *Forge) Serves(id forge.RepoID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.repoLocked(id)
	return ok
}

// repoLocked is id's state. Lock held.
func (f *Forge) repoLocked(id forge.RepoID) (*repo, bool) {
	if !strings.EqualFold(id.Host, Host) {
		return nil, false
	}
	r, ok := f.repos[strings.ToLower(id.Path)]
	return r, ok
}

// URL is the clone URL of the repository at path.
func URL(path string) string { return "https://" + Host + "/" + path }

// CreateRepo makes the repository at path ("group/subgroup/name") holding
// the history of dir, and returns its clone URL.
func (f *Forge) CreateRepo(path, dir string) (string, error) {
	bare := filepath.Join(f.dir, filepath.FromSlash(path))
	if out, err := exec.Command("git", "clone", "-q", "--bare", dir, bare).CombinedOutput(); err != nil {
		return "", fmt.Errorf("create %s: %v: %s", path, err, out)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.repos[strings.ToLower(path)] = &repo{id: forge.RepoID{Host: Host, Path: path}, perms: map[string]bool{}, checks: map[string][]*forge.CheckState{}}
	return URL(path), nil
}

// AddUser makes login a person known by email, who may write to the
// repository at path when write is set.
func (f *Forge) AddUser(path, login, email string, write bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users[strings.ToLower(login)] = email
	if r, ok := f.repos[strings.ToLower(path)]; ok {
		r.perms[strings.ToLower(login)] = write
	}
}

// git runs git in the bare repository of id.
func (f *Forge) git(id forge.RepoID, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", filepath.Join(f.dir, filepath.FromSlash(id.Path))}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), id, err, out)
	}
	return string(out), nil
}

// ChangeOf reads a change request's page: https://HOST/PATH/-/change/N.
func (f *Forge) ChangeOf(url string) (forge.RepoID, int, bool) {
	rest, ok := strings.CutPrefix(url, "https://"+Host+"/")
	if !ok {
		return forge.RepoID{}, 0, false
	}
	path, num, ok := strings.Cut(rest, "/-/change/")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n <= 0 || path == "" {
		return forge.RepoID{}, 0, false
	}
	return forge.RepoID{Host: Host, Path: path}, n, true
}

// GitEnv is the rewrite that takes git from the fake forge's URLs to its
// repositories, with a token git shows no one (forge.CloneAuth).
func (f *Forge) GitEnv(_ context.Context, repoURL string) ([]string, error) {
	if !strings.HasPrefix(repoURL, "https://"+Host+"/") {
		return nil, nil
	}
	return []string{
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=url." + f.dir + "/.insteadOf", "GIT_CONFIG_VALUE_0=https://" + Host + "/",
		"GIT_CONFIG_KEY_1=http.extraHeader", "GIT_CONFIG_VALUE_1=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x:"+f.token)),
	}, nil
}

// Credentials are GitEnv's.
func (f *Forge) Credentials(ctx context.Context, id forge.RepoID) (forge.Credentials, error) {
	if !f.Serves(id) {
		return forge.Credentials{}, fmt.Errorf("%s: %w", id, forge.ErrNotServed)
	}
	env, err := f.GitEnv(ctx, URL(id.Path))
	return forge.Credentials{Env: env, Secrets: []string{f.token}}, err
}

// Repository is the repository's page and default branch.
func (f *Forge) Repository(_ context.Context, id forge.RepoID) (forge.Repository, error) {
	if !f.Serves(id) {
		return forge.Repository{}, fmt.Errorf("%s: %w", id, forge.ErrNotServed)
	}
	head, err := f.git(id, "symbolic-ref", "--short", "HEAD")
	if err != nil {
		return forge.Repository{}, err
	}
	return forge.Repository{ID: id, WebURL: URL(id.Path), DefaultBranch: strings.TrimSpace(head)}, nil
}

// CommitURL, TreeURL and FileURL are the repository's pages.
func (f *Forge) CommitURL(r forge.Repository, sha string) string {
	return r.WebURL + "/-/commit/" + sha
}

// TreeURL is a commit's files' page.
func (f *Forge) TreeURL(r forge.Repository, commit string) string {
	return r.WebURL + "/-/tree/" + commit
}

// FileURL is a file's page at commit, at line when it is not 0.
func (f *Forge) FileURL(r forge.Repository, commit, path string, line int) string {
	u := r.WebURL + "/-/blob/" + commit + "/" + path
	if line > 0 {
		u += "#L" + strconv.Itoa(line)
	}
	return u
}

// CodeOwnersFiles are where the fake forge reads code owners.
func (f *Forge) CodeOwnersFiles() []string { return []string{"CODEOWNERS", ".forge/CODEOWNERS"} }
