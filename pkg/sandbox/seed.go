package sandbox

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A repository's first build compiles the standard library again: about a
// minute of CPU for the packages `go test` needs, paid by every repository
// (and by every test of redfix's that makes its repositories afresh). The
// seed is a Go build cache that the box fills once, from a module of its
// own that imports what code and tests use most, through the same
// confinement as every repository command (so that its entries are the
// ones those commands look up). Every confined command reads it as the
// last layer of its Go build cache (see gocache.go), read-only: nothing a
// test writes reaches it.

//go:embed seedmod
var seedModule embed.FS

// seedRecipe names how the seed is made and laid out: a change to either
// changes it, and with it every seed's key.
const seedRecipe = "redfix-go-seed/2 (a read-only layer, readable by the sandbox's user)"

// SeedOff in Config.SeedCache makes every repository's cache start empty.
const SeedOff = "off"

// DefaultSeedCache is where the seed is kept when Config.SeedCache is
// empty: the user's own cache directory, shared by every redfix of this
// user (the seed holds nothing but what the box built from its own module).
func DefaultSeedCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "redfix", "go-seed")
}

// seedCommands build what the language drivers' commands build: tests
// (with vet, as go test runs it), a coverage-instrumented test binary, and
// the packages themselves.
var seedCommands = [][]string{
	{"go", "test", "-count=1", "-json", "./..."},
	{"go", "test", "-c", "-cover", "-covermode=set", "-coverpkg=./...", "-o", "seed.test", "."},
	{"go", "vet", "./..."},
	{"go", "build", "./..."},
}

// Seed makes the seed now (it is otherwise made by the first command that
// needs it) and returns its directory, "" when seeding is off or the host
// cannot confine.
func (b *Box) Seed(ctx context.Context) (string, error) {
	if !b.status.Confined {
		return "", nil
	}
	b.seedMu.Lock()
	defer b.seedMu.Unlock()
	return b.seed(ctx)
}

// prepareCache makes the repository's cache directory, with the Go build
// cache its setup fills, and the seed when it is not made yet. A seed that
// cannot be made leaves builds slower, not wrong; why is kept.
func (b *Box) prepareCache(ctx context.Context, cache string) error {
	if err := os.MkdirAll(filepath.Join(cache, "go-build"), 0o755); err != nil {
		return err
	}
	if b.cfg.SeedCache == SeedOff || b.seedDir() != "" {
		return nil
	}
	b.seedMu.Lock()
	defer b.seedMu.Unlock()
	if b.seedErr != nil || b.seedDir() != "" {
		return nil
	}
	if _, err := b.seed(ctx); err != nil && ctx.Err() == nil {
		b.seedErr = err
	}
	return nil
}

// seedDir is the seed's build cache once it is made, "" before.
func (b *Box) seedDir() string {
	if p := b.seedPath.Load(); p != nil {
		return *p
	}
	return ""
}

// seed is the seed's build cache, made on first use: "" when seeding is
// off. Several processes may want it at once: a lock file makes one build
// it while the others wait.
func (b *Box) seed(ctx context.Context) (string, error) {
	dir := b.cfg.SeedCache
	if dir == SeedOff || dir == "" || b.goroot == "" {
		return "", nil
	}
	key, err := b.seedKey()
	if err != nil {
		return "", err
	}
	cache := filepath.Join(dir, key)
	build := filepath.Join(cache, "go-build")
	if _, err := os.Stat(filepath.Join(cache, "complete")); err == nil {
		b.seedPath.Store(&build)
		return build, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("seed cache %s: %w", dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", fmt.Errorf("seed cache lock: %w", err)
	}
	defer lock.Close()
	if err := flock(ctx, lock); err != nil {
		return "", err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if _, err := os.Stat(filepath.Join(cache, "complete")); err == nil {
		b.seedPath.Store(&build)
		return build, nil
	}
	if err := b.buildSeed(ctx, cache); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(cache, "complete"), nil, 0o644); err != nil {
		return "", fmt.Errorf("seed cache: %w", err)
	}
	b.seedPath.Store(&build)
	return build, nil
}

// seedKey names the seed for the toolchain and the flags its entries were
// built with: a seed from another Go would only be copied to be missed.
func (b *Box) seedKey() (string, error) {
	version, err := os.ReadFile(filepath.Join(b.goroot, "VERSION"))
	if err != nil {
		return "", fmt.Errorf("seed: Go's version: %w", err)
	}
	sum := sha256.Sum256([]byte(seedRecipe + "\x00" + b.goroot + "\x00" + strings.SplitN(string(version), "\n", 2)[0] + "\x00" + os.Getenv("GOFLAGS")))
	return hex.EncodeToString(sum[:8]), nil
}

// buildSeed writes the seed's module in a directory of its own and builds
// it, confined, with cache's go-build as its Go build cache (filled as a
// setup fills a repository's: the seed's module is redfix's own).
func (b *Box) buildSeed(ctx context.Context, cache string) error {
	build := filepath.Join(cache, "go-build")
	if err := os.RemoveAll(build); err != nil {
		return fmt.Errorf("seed cache: %w", err)
	}
	if err := os.MkdirAll(build, 0o755); err != nil {
		return fmt.Errorf("seed cache: %w", err)
	}
	mod, err := os.MkdirTemp("", "redfix-seed-")
	if err != nil {
		return fmt.Errorf("seed module: %w", err)
	}
	defer os.RemoveAll(mod)
	err = fs.WalkDir(seedModule, "seedmod", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := seedModule.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(mod, strings.TrimSuffix(d.Name(), ".txt")), data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("seed module: %w", err)
	}
	scratch, err := os.MkdirTemp(b.scratchRoot(), "seed-")
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer os.RemoveAll(scratch)
	if err := b.ownAll(mod, build, scratch); err != nil {
		return err
	}
	m := mounts{ws: mod, fill: []string{build}, scratch: scratch, hide: b.cfg.Hide, goEnvOff: true}
	for _, args := range seedCommands {
		res, err := b.runIn(ctx, Cmd{Dir: mod, Args: args, Timeout: DefaultTimeout}, m, args[0])
		if err != nil {
			return fmt.Errorf("seed: %s: %w", strings.Join(args, " "), err)
		}
		if res.ExitCode != 0 {
			return fmt.Errorf("seed: %s exited %d: %s", strings.Join(args, " "), res.ExitCode, tail(res.Output, 400))
		}
		if err := b.own(build); err != nil {
			return err
		}
	}
	return b.seal(build)
}

// flock takes an exclusive lock on f, giving up when ctx ends. It asks
// again every quarter second: a blocking flock cannot be cancelled.
func flock(ctx context.Context, f *os.File) error {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("seed cache lock: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("seed cache lock: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
