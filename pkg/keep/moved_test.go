package keep

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
)

// TestConflicts: in a bare clone, a change that the default branch's later
// commits leave alone merges cleanly; one whose lines they rewrote
// conflicts, naming the paths (odd names included); and a commit the
// mirror lacks is an error, not a clean merge.
func TestConflicts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(files map[string]string) string {
		t.Helper()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := repo.CommitAll(ctx, "change")
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	base := commit(map[string]string{"a.go": "package a\n\nvar A = 1\n", "b c.go": "package a\n\nvar B = 1\n", "README": "a\n"})
	change := commit(map[string]string{"a.go": "package a\n\nvar A = 2\n", "b c.go": "package a\n\nvar B = 2\n"})
	if _, err := repo.Git(ctx, "checkout", "-q", "-b", "later", base); err != nil {
		t.Fatal(err)
	}
	unrelated := commit(map[string]string{"README": "a\nb\n"})
	rewrote := commit(map[string]string{"a.go": "package a\n\nvar A = 3\n", "b c.go": "package a\n\nvar B = 3\n"})

	bare := filepath.Join(t.TempDir(), "mirror")
	if _, err := (gitrepo.Repo{Dir: dir}).Git(ctx, "clone", "-q", "--bare", "--", dir, bare); err != nil {
		t.Fatal(err)
	}
	mirror := gitrepo.Repo{Dir: bare}
	if paths, err := Conflicts(ctx, mirror, unrelated, change); err != nil || len(paths) != 0 {
		t.Errorf("onto an unrelated change: %q, %v; want a clean merge", paths, err)
	}
	paths, err := Conflicts(ctx, mirror, rewrote, change)
	if err != nil || !slices.Equal(paths, []string{"a.go", "b c.go"}) {
		t.Errorf("onto a rewrite: %q, %v; want a.go and b c.go", paths, err)
	}
	if _, err := Conflicts(ctx, mirror, rewrote, strings.Repeat("e", 40)); err == nil {
		t.Error("a missing commit merged")
	}
	c := ConflictComment([]string{"a.TestA"}, paths, "main", rewrote)
	for _, want := range []string{"`main` moved to", "`a.go`, `b c.go`", "`a.TestA`"} {
		if !strings.Contains(c, want) {
			t.Errorf("the comment lacks %q: %s", want, c)
		}
	}
}
