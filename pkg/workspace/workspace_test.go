package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
)

func TestOpenDiffResetAndConfinement(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	repo, err := gitrepo.Init(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := repo.CommitAll(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitAll(ctx, "second"); err != nil {
		t.Fatal(err)
	}

	ws, err := Open(ctx, src, first, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	data, err := os.ReadFile(filepath.Join(ws.Dir, "a.txt"))
	if err != nil || string(data) != "one\n" {
		t.Fatalf("checkout at first commit: %q, %v", data, err)
	}
	if err := ws.WriteFile("a.txt", []byte("three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff, err := ws.Diff(ctx)
	if err != nil || !strings.Contains(diff, "+three") {
		t.Fatalf("diff = %q, %v", diff, err)
	}
	if err := ws.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if diff, _ := ws.Diff(ctx); diff != "" {
		t.Fatalf("diff after reset = %q", diff)
	}

	for _, bad := range []string{"../x", "/etc/passwd", ".git/config", "a/../../x"} {
		if _, err := ws.Abs(bad); !errors.Is(err, ErrOutside) {
			t.Errorf("Abs(%q) err = %v, want ErrOutside", bad, err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(ws.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Abs("link/passwd"); !errors.Is(err, ErrOutside) {
		t.Errorf("a link out of the workspace was followed: %v", err)
	}
	if p, err := ws.Abs("sub/new.go"); err != nil || p != filepath.Join(ws.Dir, "sub/new.go") {
		t.Errorf("Abs(sub/new.go) = %q, %v", p, err)
	}
	if _, err := Open(ctx, src, "no-such-rev", t.TempDir()); !errors.Is(err, gitrepo.ErrUnknownRevision) {
		t.Errorf("Open at a missing commit: %v", err)
	}
}
