package gitrepo

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
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
