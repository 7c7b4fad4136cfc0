package github_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

// sleeps records the waits a client asked for instead of taking them.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// sampleRepo makes a small local repository with one commit.
func sampleRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, nil, "git", "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, nil, "git", "add", "-A")
	run(t, dir, nil, "git", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
	return dir
}

func run(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, env, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func tokenClients(t *testing.T, srv *ghtest.Server, sl *sleeps) *github.Clients {
	t.Helper()
	srv.AddToken("ghp_secret", "octo")
	cfg := github.Config{APIURL: srv.APIURL(), Token: "ghp_secret"}
	if sl != nil {
		cfg.Retry.Sleep = sl.sleep
	}
	c, err := github.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openPull pushes branch (one commit changing file) to acme/widgets and
// opens a pull request from it as the token's user.
func openPull(t *testing.T, srv *ghtest.Server, src, token, branch, file, title, body string) {
	t.Helper()
	run(t, src, nil, "git", "checkout", "-q", "-b", branch, "main")
	if err := os.MkdirAll(filepath.Dir(filepath.Join(src, file)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, file), []byte(branch+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, src, nil, "git", "add", "-A")
	run(t, src, nil, "git", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", branch)
	run(t, src, nil, "git", "checkout", "-q", "main")
	if out, err := srv.Git("acme", "widgets", "fetch", "-q", src, branch+":"+branch); err != nil {
		t.Fatalf("push %s: %v: %s", branch, err, out)
	}
	c, err := github.New(github.Config{APIURL: srv.APIURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	d := github.NewForge(c)
	if _, err := d.OpenChangeRequest(context.Background(), d.Repo("acme/widgets"), forge.NewChangeRequest{Title: title, Body: body, Head: branch, Base: "main"}); err != nil {
		t.Fatal(err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
