package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
)

// TestHelperHoldWorkspace is not a test: run as a child, it opens a
// workspace and waits to be killed.
func TestHelperHoldWorkspace(t *testing.T) {
	parent, src := os.Getenv("REDFIX_WS_HELPER_PARENT"), os.Getenv("REDFIX_WS_HELPER_SRC")
	if parent == "" {
		t.Skip("helper process only")
	}
	if _, err := Open(context.Background(), src, "HEAD", parent); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("OPEN\n")
	time.Sleep(time.Hour)
}

func TestSweepRemovesOnlyAbandonedWorkspaces(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	repo, err := gitrepo.Init(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CommitAll(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()

	// A worker that dies with its workspace open (kill -9).
	c := exec.Command(os.Args[0], "-test.run=^TestHelperHoldWorkspace$")
	c.Env = append(os.Environ(), "REDFIX_WS_HELPER_PARENT="+parent, "REDFIX_WS_HELPER_SRC="+src)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, _ := out.Read(buf); n == 0 {
		t.Fatal("the helper did not open its workspace")
	}
	_ = c.Process.Kill()
	_ = c.Wait()

	// A live one, in this process.
	live, err := Open(ctx, src, "HEAD", parent)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	removed, err := Sweep(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 {
		t.Fatalf("removed %v, want the dead worker's one workspace", removed)
	}
	if _, err := os.Stat(live.Dir); err != nil {
		t.Fatalf("the live workspace was swept: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(parent, prefix+"*"))
	if len(left) != 1 {
		t.Fatalf("left %v", left)
	}
	if _, err := Sweep(filepath.Join(parent, "missing")); err != nil {
		t.Fatalf("a missing parent is nothing to sweep: %v", err)
	}
}

// A scratch directory is held like a workspace: a sweep leaves it while it
// lives; Close removes it.
func TestScratchIsHeldUntilClosed(t *testing.T) {
	parent := t.TempDir()
	s, err := NewScratch(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if removed, err := Sweep(parent); err != nil || len(removed) != 0 {
		t.Fatalf("sweep removed %v (%v) while the scratch directory lives", removed, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("scratch directory left after Close: %v", err)
	}
}
