// Package forgetest is the conformance suite of forge drivers: one set of
// behavioural tests that every driver passes, each against a real forge
// or the test double of one (a Backend), so that what redfix asks of a
// forge means the same on every forge. A driver's test runs it:
//
//	func TestConformance(t *testing.T) { forgetest.Run(t, newBackend(t)) }
//
// Each part of the suite is about one capability (opening change requests,
// answering commands, checks on commits); a driver that lacks one is
// skipped there, saying so. The capabilities are declared here as their
// consumers declare them (pkg/publish, pkg/command, pkg/keep,
// pkg/commitcheck, pkg/forge/inflight): a driver that passes here satisfies
// them there.
package forgetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
)

// Backend is a forge a test holds, with the driver under test acting on it
// as redfix's account. It makes what the suite needs (repositories,
// people, their comments) and shows what the driver did where the
// driver's own reads do not.
type Backend interface {
	// Driver is the driver under test.
	Driver() forge.Driver
	// CreateRepo puts the history of dir (a git repository with a main
	// branch) on the forge as a new repository and returns its clone URL.
	// name is the repository's own name; the backend chooses where it
	// lives (its owner, or a nested group on a forge that has them).
	CreateRepo(t testing.TB, name, dir string) string
	// AddUser makes login a person known by email, who may push to repo
	// when write is set and only read it otherwise.
	AddUser(t testing.TB, repo forge.RepoID, login, email string, write bool)
	// Comment is login's comment on change request number, as the
	// forge's event would bring it to redfix.
	Comment(t testing.TB, repo forge.RepoID, number int, login, body string) forge.Comment
	// Comments are the bodies of the comments on change request number.
	Comments(t testing.TB, repo forge.RepoID, number int) []string
	// Acknowledged reports whether the driver said it heard c.
	Acknowledged(t testing.TB, c forge.Comment) bool
	// Labels and Reviewers are change request number's.
	Labels(t testing.TB, repo forge.RepoID, number int) []string
	Reviewers(t testing.TB, repo forge.RepoID, number int) []string
}

// Run runs the suite against b.
func Run(t *testing.T, b Backend) {
	t.Run("Identity", func(t *testing.T) { testIdentity(t, b) })
	t.Run("Credentials", func(t *testing.T) { testCredentials(t, b) })
	t.Run("ChangeRequests", func(t *testing.T) { testChangeRequests(t, b) })
	t.Run("Reviews", func(t *testing.T) { testReviews(t, b) })
	t.Run("Commands", func(t *testing.T) { testCommands(t, b) })
	t.Run("Checks", func(t *testing.T) { testChecks(t, b) })
}

// fixture is a repository on the backend's forge, and its history here.
type fixture struct {
	b    Backend
	d    forge.Driver
	dir  string // a clone of its history
	url  string // its clone URL
	repo forge.RepoID
	main string // main's commit
}

// newFixture makes a repository of one commit on main.
func newFixture(t *testing.T, b Backend, name string) *fixture {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, nil, "init", "-q", "-b", "main")
	write(t, dir, "calc/calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n")
	git(t, dir, nil, "add", "-A")
	git(t, dir, nil, "commit", "-q", "-m", "calc")
	url := b.CreateRepo(t, name, dir)
	repo, err := forge.RepoOf(url)
	if err != nil {
		t.Fatalf("the backend's clone URL %q names no repository: %v", url, err)
	}
	return &fixture{b: b, d: b.Driver(), dir: dir, url: url, repo: repo, main: strings.TrimSpace(git(t, dir, nil, "rev-parse", "HEAD"))}
}

// branch commits file on a new branch from main, as author, and returns
// the commit.
func (f *fixture) branch(t *testing.T, name, file, author string) string {
	t.Helper()
	git(t, f.dir, nil, "checkout", "-q", "-b", name, "main")
	write(t, f.dir, file, name+"\n")
	git(t, f.dir, nil, "add", "-A")
	git(t, f.dir, []string{"GIT_AUTHOR_NAME=" + author, "GIT_AUTHOR_EMAIL=" + author + "@example.com"}, "commit", "-q", "-m", "change "+file)
	sha := strings.TrimSpace(git(t, f.dir, nil, "rev-parse", "HEAD"))
	git(t, f.dir, nil, "checkout", "-q", "main")
	return sha
}

// push sends sha to branch with the driver's credentials.
func (f *fixture) push(t *testing.T, sha, branch string) {
	t.Helper()
	c := need[Credentials](t, f.d)
	cred, err := c.Credentials(context.Background(), f.repo)
	if err != nil {
		t.Fatalf("credentials for %s: %v", f.repo, err)
	}
	git(t, f.dir, cred.Env, "push", "-q", f.url, sha+":refs/heads/"+branch)
}

// need is d as the capability C, or the test is skipped.
func need[C any](t *testing.T, d forge.Driver) C {
	t.Helper()
	c, ok := d.(C)
	if !ok {
		var zero *C
		t.Skipf("the %s driver lacks %T", d.Name(), zero)
	}
	return c
}

// git runs git in dir with env added and returns its output.
func git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, env, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitErr(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com"}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func write(t testing.TB, dir, file, content string) {
	t.Helper()
	p := filepath.Join(dir, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
