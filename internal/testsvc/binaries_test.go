package testsvc

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The cache's key changes with the module's sources and the build tags,
// not with its tests or with what is not source.
func TestSourceKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("m.go", "package m\n")
	write("m_test.go", "package m\n")
	ctx := context.Background()
	key := func(tags ...string) string {
		t.Helper()
		k, err := sourceKey(ctx, dir, tags)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if key() != k0 {
		t.Fatal("the key of unchanged sources changed")
	}
	write("m_test.go", "package m\n\n// a test changed\n")
	write(".git/HEAD", "ref: refs/heads/main\n")
	write("node_modules/x/index.js", "x\n")
	if key() != k0 {
		t.Error("a test, git's metadata or node_modules changed the key")
	}
	if key("redfix_trusting") == k0 {
		t.Error("a build tag did not change the key")
	}
	write("sub/data.txt", "embedded\n")
	k1 := key()
	if k1 == k0 {
		t.Error("a new file (one go:embed may take) did not change the key")
	}
	write("m.go", "package m\n\nvar X = 1\n")
	if key() == k1 {
		t.Error("a changed source did not change the key")
	}
}

// Pruning removes the entries nobody holds and nobody used lately.
func TestPruneKeepsWhatIsHeldOrRecent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	old := time.Now().Add(-2 * unusedFor)
	entry := func(key string, used time.Time) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, key), 0o755); err != nil {
			t.Fatal(err)
		}
		l := filepath.Join(root, key+".lock")
		if err := os.WriteFile(l, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(l, used, used); err != nil {
			t.Fatal(err)
		}
		return l
	}
	entry("stale", old)
	entry("recent", time.Now())
	entry("mine", old)
	held, err := os.Open(entry("held", old))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	prune(root, "mine")
	for key, want := range map[string]bool{"stale": false, "recent": true, "mine": true, "held": true} {
		_, err := os.Stat(filepath.Join(root, key))
		if got := err == nil; got != want {
			t.Errorf("entry %s kept: %v, want %v", key, got, want)
		}
	}
}
