package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckRevision(t *testing.T) {
	for _, ok := range []string{"0123abcd", "main", "release/1.2", "HEAD~3", "HEAD^2", "v1.0.0", "feature-x_y"} {
		if err := CheckRevision(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "--upload-pack=touch /tmp/x", "--output=/tmp/x", "a..b", "a...b", "HEAD:file", "main@{1}", "a b", "a\nb", "ref*", "x\\y", "é", "a//b"} {
		if err := CheckRevision(bad); !errors.Is(err, ErrBadRevision) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

// Hostile values reach git as operands, or not at all: no option takes
// effect.
func TestHostileValuesNeverReachGitAsOptions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	if err := os.Mkdir(filepath.Join(dir, "r"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := Init(ctx, filepath.Join(dir, "r"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo.Dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitAll(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	hostile := "--upload-pack=touch " + marker
	if _, err := Clone(ctx, hostile, filepath.Join(dir, "c1")); err == nil {
		t.Error("clone of an option succeeded")
	}
	if _, err := Clone(ctx, "ext::sh -c touch% "+marker, filepath.Join(dir, "c2")); err == nil {
		t.Error("clone through the ext transport succeeded")
	}
	if _, err := repo.Resolve(ctx, hostile); !errors.Is(err, ErrBadRevision) {
		t.Errorf("resolve: %v", err)
	}
	if err := repo.Checkout(ctx, "--orphan=x"); !errors.Is(err, ErrBadRevision) {
		t.Errorf("checkout: %v", err)
	}
	if _, err := repo.Path(ctx, "--all", "HEAD"); !errors.Is(err, ErrBadRevision) {
		t.Errorf("path: %v", err)
	}
	if _, err := repo.Show(ctx, "--output="+marker); !errors.Is(err, ErrBadRevision) {
		t.Errorf("show: %v", err)
	}
	if err := repo.Fetch(ctx, hostile, "main"); err == nil {
		t.Error("fetch from an option succeeded")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hostile value ran a command")
	}
}
