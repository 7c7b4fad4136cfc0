package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/workspace"
)

// needRipgrep fails under CI (which installs rg) and skips elsewhere when
// ripgrep is missing.
func needRipgrep(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ripgrep (rg) is missing; .ci/run installs it")
		}
		t.Skip("ripgrep (rg) is not installed")
	}
}

// The benchmark's setup, on a tiny tree: the cached repository, the query
// set, ripgrep, the ranking comparison and the percentiles.
func TestSearchBenchSetup(t *testing.T) {
	needRipgrep(t)
	ctx := context.Background()
	src := t.TempDir()
	harnesstest.WriteFiles(t, src, map[string]string{
		"go.mod":           "module example.com/tiny\n\ngo 1.21\n",
		"buf/buf.go":       "package buf\n\n// Buffer holds bytes.\ntype Buffer struct{ b []byte }\n\n// Grow grows b.\nfunc (b *Buffer) Grow(n int) { Grow(n) }\n\n// Grow is free.\nfunc Grow(n int) {}\n",
		"buf/use.go":       "package buf\n\nfunc use() { var b Buffer; b.Grow(1); Grow(2) }\n",
		"buf/buf_test.go":  "package buf\n\nfunc helperGrow() { Grow(3) }\n",
		"a/calls.go":       "package a\n\n// Grow Grow Grow Buffer Buffer: a file that only names them.\n",
		".git-like/x.txt":  "Grow\n",
		"testdata/in.json": "{\"Grow\": 1}\n",
	})
	cache := t.TempDir()
	dir, err := benchTree(ctx, src, cache, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", dir, "ls-files").Output(); err != nil || !strings.Contains(string(out), "buf/buf.go") {
		t.Fatalf("the tree is not committed: %v\n%s", err, out)
	}
	// A second run reuses the cached tree: a change to the source is not seen.
	harnesstest.WriteFiles(t, src, map[string]string{"buf/new.go": "package buf\n"})
	if again, err := benchTree(ctx, src, cache, "tiny"); err != nil || again != dir {
		t.Fatalf("second run: %q, %v", again, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "buf/new.go")); err == nil {
		t.Fatal("the cached tree was made again")
	}
	// An unfinished tree (no mark) is made again.
	if err := os.Remove(dir + ".complete"); err != nil {
		t.Fatal(err)
	}
	if _, err := benchTree(ctx, src, cache, "tiny"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "buf/new.go")); err != nil {
		t.Fatal("an unfinished tree is reused")
	}

	ws, err := workspace.Open(ctx, dir, "HEAD", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	s := NewSession(testEnv(t), ws, taskForBench(), All())
	t.Cleanup(s.Close)
	if _, err := s.index(); err != nil {
		t.Fatal(err)
	}
	q := sampleQueries(s.idx, 20, 1)
	if len(q.funcs) == 0 || len(q.types) != 1 || len(q.misses) == 0 {
		t.Fatalf("queries: %+v", q)
	}
	if !q.defs["Buffer"]["buf/buf.go"] || !q.defs["Grow"]["buf/buf.go"] {
		t.Errorf("definitions: %v", q.defs)
	}
	for _, name := range q.funcs {
		if name == "helperGrow" {
			t.Errorf("a test file's function is sampled: %q", name)
		}
	}

	files, err := ripgrep(ctx, ws.Dir, "Grow", false)
	if err != nil {
		t.Fatal(err)
	}
	// (ripgrep leaves hidden files out.)
	if want := []string{"a/calls.go", "buf/buf.go", "buf/buf_test.go", "buf/use.go", "testdata/in.json"}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("rg Grow = %q, want %q", files, want)
	}
	if files, err := ripgrep(ctx, ws.Dir, "noSuchThing", false); err != nil || files != nil {
		t.Errorf("rg miss = %q, %v", files, err)
	}
	if _, err := ripgrep(ctx, ws.Dir, "(", true); err == nil {
		t.Error("a bad expression is no error for rg")
	}

	f := measureSearch(t, s, q, true)
	if len(f.methodLat) != len(q.funcs)+len(q.misses) || len(f.classLat) != len(q.types)+len(q.misses) || len(f.codeLat) != len(f.rgLat) || len(f.codeLat) == 0 {
		t.Fatalf("figures: %+v", f)
	}
	// Our ranking puts the declaring file first where ripgrep's path
	// order puts the file that only names them.
	if f.ourTopDef != f.codeQueries || f.rgTopDef >= f.codeQueries {
		t.Errorf("first file declares the name: ours %d, rg %d, of %d", f.ourTopDef, f.rgTopDef, f.codeQueries)
	}
	if f.top10 == 0 || f.top10 > f.top10Of {
		t.Errorf("top-10 overlap %d of %d", f.top10, f.top10Of)
	}

	if got := shownFiles("3 matches in 2 files for \"x\" (literal):\nb.go:1: x\nb.go:2: x: y\na.go:5: x\n[1 more match not shown]\n"); strings.Join(got, " ") != "b.go a.go" {
		t.Errorf("shownFiles = %q", got)
	}
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	if p := percentile(ds, 50); p != 5 {
		t.Errorf("p50 = %d", p)
	}
	if p := percentile(ds, 99); p != 10 {
		t.Errorf("p99 = %d", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("p50 of nothing = %d", p)
	}
}
