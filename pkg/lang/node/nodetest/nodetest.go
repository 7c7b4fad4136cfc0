// Package nodetest holds what tests of JavaScript and TypeScript
// repositories share across packages: a check that node and npm are here
// (a skip elsewhere, a failure under CI), the cache directory the tests'
// npm installs share, a confining sandbox, fixture projects (with their
// exact-pinned lockfiles) written as git histories, and the JUnit report a
// runner writes for a commit, as CI would post it.
package nodetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/redfix/redfix/pkg/lang/python/pythontest"
)

// CacheEnv names the directory the tests' npm installs are kept in across
// runs; .ci/run sets it to .cache/node in the checkout.
const CacheEnv = "REDFIX_TEST_NODE_CACHE"

// Require skips t when node and npm are not on PATH, and fails it under
// CI=true, where .ci/run installs them.
func Require(t testing.TB) {
	t.Helper()
	for _, name := range []string{"node", "npm"} {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI must have %s on PATH (.ci/run installs nodejs and npm): %v", name, err)
			}
			t.Skipf("no %s here: %v", name, err)
		}
	}
}

// CacheDir is the directory the tests share for what npm installs (the
// driver's node_modules by lockfile, npm's download cache): $REDFIX_TEST_NODE_CACHE when set,
// else .cache/node at the module's root. It is made when missing.
func CacheDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(CacheEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatalf("no %s, and no module root to keep .cache/node in: %v", CacheEnv, err)
		}
		dir = filepath.Join(root, ".cache", "node")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("node test cache %s: %v", dir, err)
	}
	return dir
}

// moduleRoot is the nearest directory above the working directory (a
// test's package) holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// Confined is a context whose commands run in a sandbox that must confine,
// with a sandbox cache directory of the test's own, for the repository
// repo: under CI=true a host that cannot confine fails the test, elsewhere
// it is skipped with the reason.
func Confined(t testing.TB, repo string) context.Context {
	t.Helper()
	return pythontest.Confined(t, repo)
}

// History makes a git repository in t's temporary directory and commits
// each archive in turn (see pythontest.History: the archive's comment is
// the commit's message, "(deleted)\n" removes a file). It returns the
// repository's directory and the commits, oldest first.
func History(t testing.TB, archives ...string) (dir string, commits []string) {
	t.Helper()
	return pythontest.History(t, archives...)
}

// installed is a node_modules for the lockfile and package.json in dir,
// installed once (npm ci, no install scripts, unconfined: the fixtures are
// the tests' own) under the cache directory and reused across runs.
func installed(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("install the fixture's packages: %v", err)
		}
		h.Write([]byte(name + "\x00"))
		h.Write(data)
		h.Write([]byte{0})
	}
	cache := CacheDir(t)
	key := hex.EncodeToString(h.Sum(nil))[:24]
	target := filepath.Join(cache, "ci", key)
	done := filepath.Join(target, ".complete")
	if _, err := os.Stat(done); err == nil {
		return filepath.Join(target, "node_modules")
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(target+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(done); err == nil {
		return filepath.Join(target, "node_modules")
	}
	_ = os.RemoveAll(target)
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if err := os.WriteFile(filepath.Join(target, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--cache", filepath.Join(cache, "npm"))
	cmd.Dir = target
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci for the fixture: %v\n%s", err, out)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(target, "node_modules")
}
