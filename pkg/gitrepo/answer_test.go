package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/internal/testsvc"
)

// A repository that is not there is an answer (ErrNoRepository), told
// apart from other failures, so that triage stops asking.
func TestCloneOfAMissingRepositoryIsAnAnswer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	_, err := CloneApart(ctx, filepath.Join(dir, "no-such-repo"), filepath.Join(dir, "git"), filepath.Join(dir, "tree"))
	if !errors.Is(err, ErrNoRepository) {
		t.Fatalf("clone of a missing path: %v, want ErrNoRepository", err)
	}
	// A failure of a command that does not reach a source is not one.
	src, err := Init(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Git(ctx, "show", "no-such-file-or-rev-here"); err == nil || errors.Is(err, ErrNoRepository) {
		t.Fatalf("show of a missing revision: %v", err)
	}
}

// Against a real git daemon, a repository it does not serve and a commit
// its repository does not have are answers (ErrUnfetchable), whatever the
// daemon's words: it took the connection. A port nobody listens on is no
// answer (ErrUnreachable), to be asked again later.
func TestGitDaemonAnswersAreToldFromNoServer(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := Init(ctx, filepath.Join(base, "real"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src.Dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head, err := src.CommitAll(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	d := testsvc.StartGitDaemon(t, base)
	work := t.TempDir()

	// The daemon serves the real one: the classification is not a
	// refusal of everything.
	real, err := CloneApart(ctx, d.URL("real"), filepath.Join(work, "real-git"), filepath.Join(work, "real"))
	if err != nil {
		t.Fatalf("clone of the served repository: %v\n%s", err, d.Output())
	}
	if got, err := real.Resolve(ctx, head); err != nil || got != head {
		t.Fatalf("the clone's head: %q, %v", got, err)
	}

	_, err = CloneApart(ctx, d.URL("no-such-repository"), filepath.Join(work, "missing-git"), filepath.Join(work, "missing"))
	if !errors.Is(err, ErrUnfetchable) || errors.Is(err, ErrUnreachable) {
		t.Errorf("clone of a repository the daemon does not serve: %v, want ErrUnfetchable", err)
	}
	missing := "0123456789abcdef0123456789abcdef01234567"
	if err := real.Fetch(ctx, d.URL("real"), missing); !errors.Is(err, ErrUnfetchable) || errors.Is(err, ErrUnreachable) {
		t.Errorf("fetch of a commit the repository does not have: %v, want ErrUnfetchable", err)
	}
	// The same through the clone's remote, named rather than spelled out.
	if err := real.Fetch(ctx, "origin", missing); !errors.Is(err, ErrUnfetchable) {
		t.Errorf("fetch from origin of a commit it does not have: %v, want ErrUnfetchable", err)
	}

	closed := fmt.Sprintf("git://127.0.0.1:%d/real", testsvc.FreePort(t))
	_, err = CloneApart(ctx, closed, filepath.Join(work, "closed-git"), filepath.Join(work, "closed"))
	if !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrUnfetchable) {
		t.Errorf("clone from a closed port: %v, want ErrUnreachable", err)
	}
}

func TestServerAddress(t *testing.T) {
	for src, want := range map[string]string{
		"git://127.0.0.1:9419/x":           "127.0.0.1:9419",
		"git://example.com/x":              "example.com:9418",
		"https://github.com/acme/shop.git": "github.com:443",
		"http://127.0.0.1:8080/acme/shop":  "127.0.0.1:8080",
		"ssh://git@example.com/acme/shop":  "example.com:22",
		"git@example.com:acme/shop.git":    "example.com:22",
		"/srv/repos/shop":                  "",
		"file:///srv/repos/shop":           "",
		"../shop":                          "",
	} {
		got, ok := serverAddress(src)
		if got != want || ok != (want != "") {
			t.Errorf("serverAddress(%q) = %q, %v; want %q", src, got, ok, want)
		}
	}
}
