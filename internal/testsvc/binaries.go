package testsvc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binaries are redfix's commands (cmd/bot, cmd/worker) built with some
// build tags (none: a release build). They are built once for every test
// binary of a `go test` run, and for later runs while the module's sources
// are unchanged: into a cache directory keyed by a hash of the sources,
// the toolchain and the tags (commandCache), under a file lock, so that
// the packages that start the commands (pkg/faults, test/hostile) share
// one build when go test runs them side by side.
type Binaries struct {
	once        sync.Once
	bot, worker string
	err         error
}

// Build returns the commands built with tags, building them unless the
// cache holds them already; later calls return the same binaries.
func (b *Binaries) Build(t testing.TB, tags ...string) (bot, worker string) {
	t.Helper()
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		var dir string
		dir, b.err = buildCommands(ctx, tags)
		b.bot, b.worker = filepath.Join(dir, "bot"), filepath.Join(dir, "worker")
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bot, b.worker
}

// commandCache is where built commands are kept: the user's cache
// directory (XDG_CACHE_HOME), which a fresh CI run starts empty.
func commandCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "redfix-test", "commands")
}

// unusedFor is how long an entry of the cache nobody holds is kept after
// its last use, for the next run on the same sources.
const unusedFor = 2 * time.Hour

// buildCommands returns the directory holding bot and worker built with
// tags. The process keeps a shared lock on the entry until it exits, so
// that no other run prunes it while this one starts its commands.
func buildCommands(ctx context.Context, tags []string) (string, error) {
	key, err := sourceKey(ctx, ".", tags)
	if err != nil {
		return "", err
	}
	root := commandCache()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(root, key)
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	// Held exclusively while it is built; the file stays open (shared) for
	// the rest of the process.
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "worker")); err != nil {
		if err := goBuild(ctx, dir, tags); err != nil {
			syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
			lock.Close()
			return "", err
		}
	}
	now := time.Now()
	_ = os.Chtimes(lock.Name(), now, now)
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_SH); err != nil {
		lock.Close()
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	prune(root, key)
	return dir, nil
}

// goBuild builds the commands into a new directory, renamed to dir once
// complete.
func goBuild(ctx context.Context, dir string, tags []string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-o", tmp + string(filepath.Separator)}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "github.com/redfix/redfix/cmd/bot", "github.com/redfix/redfix/cmd/worker")
	if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// prune removes the entries other than keep that no process holds and
// that were not used for unusedFor.
func prune(root, keep string) {
	locks, _ := filepath.Glob(filepath.Join(root, "*.lock"))
	for _, l := range locks {
		key := strings.TrimSuffix(filepath.Base(l), ".lock")
		if key == keep {
			continue
		}
		if fi, err := os.Stat(l); err != nil || time.Since(fi.ModTime()) < unusedFor {
			continue
		}
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(filepath.Join(root, key))
			os.Remove(l)
		}
		f.Close()
	}
}

// sourceKey hashes what the commands are built from: the toolchain and
// its settings, the tags, and every file but the tests of the module that
// holds dir (go.mod and go.sum, the sources, the files they embed).
func sourceKey(ctx context.Context, dir string, tags []string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "-json", "GOMOD", "GOVERSION", "GOOS", "GOARCH", "GOAMD64",
		"GOEXPERIMENT", "GOFLAGS", "CGO_ENABLED", "CC", "CGO_CFLAGS", "CGO_LDFLAGS")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	var env map[string]string
	if err := json.Unmarshal(out, &env); err != nil || env["GOMOD"] == "" || env["GOMOD"] == os.DevNull {
		return "", fmt.Errorf("go env: no module here (%v)", err)
	}
	h := sha256.New()
	h.Write(out)
	fmt.Fprintf(h, "tags %q\n", tags)
	root := filepath.Dir(env["GOMOD"])
	if err := hashTree(h, root); err != nil {
		return "", fmt.Errorf("hash the module's sources: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// hashTree writes the names and contents of root's files to h, in order,
// leaving out tests and what is not source (git's metadata, caches).
func hashTree(h io.Writer, root string) error {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch name := d.Name(); {
		case d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "node_modules"):
			return filepath.SkipDir
		case d.Type().IsRegular() && !strings.HasSuffix(name, "_test.go"):
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%q %d\n", rel, len(data))
		h.Write(data)
	}
	return nil
}
