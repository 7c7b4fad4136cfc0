package sandbox

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A repository's first build in its own cache compiles the standard
// library again: about a minute of CPU for the packages `go test` needs,
// paid by every repository (and by every test of redfix's that makes its
// repositories afresh). The seed is a Go build cache that the box fills
// once, from a module of its own that imports what code and tests use
// most, through the same confinement and environment as every repository
// command (so that its entries are the ones those commands look up). A
// repository's cache, when first made, starts as a copy of it.
//
// The seed is never shown writable to a repository's command: it is copied,
// never linked, so that nothing a test writes in its cache reaches the seed
// or another repository's cache.

//go:embed seedmod
var seedModule embed.FS

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

// prepareCache makes the repository cache dir, started from the seed when
// it is new. A seed that cannot be made leaves the cache empty (builds are
// slower, not wrong); why is kept for Status.
func (b *Box) prepareCache(ctx context.Context, cache string) error {
	build := filepath.Join(cache, "go-build")
	if _, err := os.Stat(build); err == nil {
		return nil
	}
	b.seedMu.Lock()
	defer b.seedMu.Unlock()
	if _, err := os.Stat(build); err == nil {
		return nil
	}
	if seed, err := b.seed(ctx); err != nil {
		b.seedErr = err
	} else if seed != "" {
		tmp := build + ".seeding"
		_ = os.RemoveAll(tmp)
		if err := copyTree(seed, tmp); err != nil {
			b.seedErr = fmt.Errorf("copy the seed into %s: %w", cache, err)
			_ = os.RemoveAll(tmp)
		} else if err := os.Rename(tmp, build); err != nil {
			return fmt.Errorf("sandbox: cache %s: %w", cache, err)
		}
	}
	return os.MkdirAll(build, 0o700)
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
		return build, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
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
		return build, nil
	}
	if err := b.buildSeed(ctx, cache); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(cache, "complete"), nil, 0o600); err != nil {
		return "", fmt.Errorf("seed cache: %w", err)
	}
	return build, nil
}

// seedKey names the seed for the toolchain and the flags its entries were
// built with: a seed from another Go would only be copied to be missed.
func (b *Box) seedKey() (string, error) {
	version, err := os.ReadFile(filepath.Join(b.goroot, "VERSION"))
	if err != nil {
		return "", fmt.Errorf("seed: Go's version: %w", err)
	}
	sum := sha256.Sum256([]byte(b.goroot + "\x00" + strings.SplitN(string(version), "\n", 2)[0] + "\x00" + os.Getenv("GOFLAGS")))
	return hex.EncodeToString(sum[:8]), nil
}

// buildSeed writes the seed's module in a directory of its own and builds
// it, confined, with cache as its Go build cache.
func (b *Box) buildSeed(ctx context.Context, cache string) error {
	if err := os.MkdirAll(filepath.Join(cache, "go-build"), 0o700); err != nil {
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
	for _, args := range seedCommands {
		cmd := Cmd{Dir: mod, Args: args, Timeout: DefaultTimeout}
		env := b.env("", cache, nil, false)
		cmd.Args = b.wrap(cmd, "", mod, cache)
		res, err := run(ctx, cmd, env, args[0])
		if err != nil {
			return fmt.Errorf("seed: %s: %w", strings.Join(args, " "), err)
		}
		if res.ExitCode != 0 {
			return fmt.Errorf("seed: %s exited %d: %s", strings.Join(args, " "), res.ExitCode, tail(res.Output, 400))
		}
	}
	return nil
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

// copyTree copies the regular files of src into dst (made), keeping their
// modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case !d.Type().IsRegular():
			return nil
		}
		return copyFile(p, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
