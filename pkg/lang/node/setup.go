package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/untrusted"
)

// recipe names how node_modules is made: a change to the making changes
// it, and with it every cache entry's key.
const recipe = "redfix-node-modules/3"

// readyFile marks a cache entry made whole; it holds the key.
const readyFile = ".redfix-ready"

// maxLockfile bounds a lockfile read.
const maxLockfile = 64 << 20

// manager is a package manager as the driver runs it.
type manager struct {
	name     string // npm, pnpm, yarn
	lockfile string
	bin      string // the binary, found on PATH
}

// managers are the lockfiles the driver installs from, in the order they
// are looked for.
var managers = []struct{ name, lockfile string }{
	{"npm", "package-lock.json"},
	{"npm", "npm-shrinkwrap.json"},
	{"pnpm", "pnpm-lock.yaml"},
	{"yarn", "yarn.lock"},
}

// Setup installs the checkout's packages (see prepare). Run, RunPackages,
// Build, List, Localize and Check set up first too when the lockfile or
// package.json changed since: Setup is where a job pays for it up front.
func (d Driver) Setup(ctx context.Context, dir string) error {
	_, err := d.prepare(ctx, dir)
	return err
}

// prepare makes the node_modules the checkout at dir declares and returns
// its path ("" when the checkout declares no package: node:test needs
// none).
//
// The package manager is the lockfile's: package-lock.json or
// npm-shrinkwrap.json is installed with npm ci, pnpm-lock.yaml with pnpm
// install --frozen-lockfile, yarn.lock with yarn install
// --frozen-lockfile; a checkout with dependencies and no lockfile is an
// error (an install without one resolves versions of the registry's
// choosing, not the repository's). Only package.json and the lockfile are
// copied out of the checkout: a repository's .npmrc (a registry, tokens)
// is not read; nor are npm workspaces' own package.json files.
//
// Every package must come from the registry (Driver.Registry, passed to
// the manager): a lockfile or package.json naming a tarball elsewhere, a
// git repository, or a file or link outside the checkout's workspace
// packages is refused before any install runs, the error naming each (see
// checkSources).
//
// node_modules is made once per key (the lockfile, package.json, node's
// version, the manager, the registry, whether install scripts run) in the driver's cache
// directory, under a lock jobs share, by the only command that may reach
// the network (sandbox.Cmd.Setup); tests then see it read-only (see
// session). Install scripts do not run unless the driver says so: they
// are the repository's code (its dependencies' as it chose them), run
// with the network at setup, and what they write would be shared by every
// later job through the cache.
func (d Driver) prepare(ctx context.Context, dir string) (string, error) {
	pkg, err := readPackageJSON(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("node setup: read package.json: %w", err)
	}
	m, lock, err := d.manager(dir)
	if err != nil {
		return "", err
	}
	if m.name == "" {
		if len(pkg.Dependencies)+len(pkg.DevDependencies)+len(pkg.OptionalDependencies) == 0 {
			return "", nil
		}
		return "", errors.New("node setup: package.json declares dependencies but the checkout has no lockfile (package-lock.json, pnpm-lock.yaml or yarn.lock): without one an install takes versions the repository never tested")
	}
	manifest, err := untrusted.ReadFile(dir, "package.json", maxPackageJSON)
	if err != nil {
		return "", fmt.Errorf("node setup: read package.json: %w", err)
	}
	version, err := d.nodeVersion()
	if err != nil {
		return "", err
	}
	reg, err := d.registry(ctx)
	if err != nil {
		return "", err
	}
	key := d.key(m, version, reg, manifest, lock)
	root := d.cacheRoot(ctx)
	entry := filepath.Join(root, "modules-"+key[:24])
	if ready(entry, key) {
		return filepath.Join(entry, "node_modules"), nil
	}
	if err := checkSources(reg, m.lockfile, manifest, lock); err != nil && !untrusted.Trusting {
		return "", err
	}
	if err := d.install(ctx, m, reg, root, entry, key, manifest, lock); err != nil {
		return "", err
	}
	return filepath.Join(entry, "node_modules"), nil
}

// cacheRoot is the driver's cache directory: the configured one (with a
// directory of its own for untrusted runs), or the repository's in the
// sandbox's.
func (d Driver) cacheRoot(ctx context.Context) string {
	if d.CacheDir == "" {
		return filepath.Join(sandbox.CacheDir(ctx), "node")
	}
	root := d.CacheDir
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if sandbox.Untrusted(ctx) {
		root = filepath.Join(root, "untrusted")
	}
	return root
}

// manager finds the checkout's lockfile, its package manager, and the
// manager's binary; a lockfile whose manager is not installed is an error
// naming it. m.name is "" when there is no lockfile.
func (d Driver) manager(dir string) (manager, []byte, error) {
	for _, c := range managers {
		fi, err := untrusted.Lstat(dir, c.lockfile)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		lock, err := untrusted.ReadFile(dir, c.lockfile, maxLockfile)
		if err != nil {
			return manager{}, nil, fmt.Errorf("node setup: read %s: %w", c.lockfile, err)
		}
		bin, err := exec.LookPath(c.name)
		if err != nil {
			return manager{}, nil, fmt.Errorf("node setup: the checkout's %s needs %s, which is not installed here (on PATH): %w", c.lockfile, c.name, err)
		}
		return manager{name: c.name, lockfile: c.lockfile, bin: bin}, lock, nil
	}
	return manager{}, nil, nil
}

// key names a cache entry by what makes it.
func (d Driver) key(m manager, version string, reg registry, manifest, lock []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s %s\n%s\nscripts=%v\nregistry=%s\n", recipe, m.name, m.lockfile, version, d.InstallScripts, reg)
	fmt.Fprintf(h, "%d\n", len(manifest))
	h.Write(manifest)
	fmt.Fprintf(h, "\n%d\n", len(lock))
	h.Write(lock)
	return hex.EncodeToString(h.Sum(nil))
}

// ready reports a cache entry made whole for key.
func ready(entry, key string) bool {
	data, err := untrusted.ReadFile(entry, readyFile, 256)
	return err == nil && string(data) == key
}

var versions sync.Map // node binary → its version

// nodeBin is the node binary the driver runs.
func (d Driver) nodeBin() (string, error) {
	name := d.Node
	if name == "" {
		name = "node"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("node: no node binary %q (set the driver's node): %w", name, err)
	}
	return p, nil
}

// nodeVersion is node's version ("v20.20.2"), asked once per binary.
func (d Driver) nodeVersion() (string, error) {
	bin, err := d.nodeBin()
	if err != nil {
		return "", err
	}
	if v, ok := versions.Load(bin); ok {
		return v.(string), nil
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("node setup: %s --version: %w", bin, err)
	}
	v := strings.TrimSpace(string(out))
	versions.Store(bin, v)
	return v, nil
}

// install makes the cache entry: package.json and the lockfile copied into
// a staging directory, the manager run there, the staging directory
// renamed into place and marked ready. A job that died halfway leaves a
// staging directory the next one removes.
func (d Driver) install(ctx context.Context, m manager, reg registry, root, entry, key string, manifest, lock []byte) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	unlock, err := lockFile(ctx, entry+".lock")
	if err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	defer unlock()
	if ready(entry, key) {
		return nil
	}
	staging := entry + ".staging"
	for _, p := range []string{staging, entry} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("node setup: %w", err)
		}
	}
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	defer os.RemoveAll(staging)
	if err := os.WriteFile(filepath.Join(staging, "package.json"), manifest, 0o644); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(staging, m.lockfile), lock, 0o644); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	downloads := filepath.Join(root, m.name+"-cache")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	var args, env []string
	switch m.name {
	case "npm":
		args = []string{m.bin, "ci", "--no-audit", "--no-fund", "--cache", downloads, "--prefer-offline", "--replace-registry-host=never"}
	case "pnpm":
		args = []string{m.bin, "install", "--frozen-lockfile", "--store-dir", downloads}
	case "yarn":
		args = []string{m.bin, "install", "--frozen-lockfile", "--non-interactive", "--cache-folder", downloads}
	}
	args = append(args, "--registry="+reg.String())
	if !d.InstallScripts {
		args = append(args, "--ignore-scripts")
	}
	bin, err := d.nodeBin()
	if err != nil {
		return err
	}
	// The node the tests run with first on PATH: managers start node
	// through /usr/bin/env.
	env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false", "CI=true")
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Dir: staging, Args: args, Env: env, Setup: true, Fill: []string{staging, downloads},
		Registries: []string{reg.String()}, Timeout: d.SetupTimeout, MaxOutput: d.MaxOutput,
	})
	cmd := strings.Join(args, " ")
	switch {
	case err != nil:
		return fmt.Errorf("node setup: %s: %w", cmd, err)
	case res.TimedOut:
		return fmt.Errorf("node setup: %s timed out after %s:\n%s", cmd, res.Duration.Round(time.Second), clip.Middle(strings.TrimSpace(res.Output), maxSetupOutput))
	case res.ExitCode != 0:
		return fmt.Errorf("node setup: %s exited with status %d:\n%s", cmd, res.ExitCode, clip.Middle(strings.TrimSpace(res.Output), maxSetupOutput))
	}
	if fi, err := os.Lstat(filepath.Join(staging, "node_modules")); err != nil || !fi.IsDir() {
		if err := os.Mkdir(filepath.Join(staging, "node_modules"), 0o755); err != nil {
			return fmt.Errorf("node setup: %w", err)
		}
	}
	if err := makeScratch(filepath.Join(staging, "node_modules")); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	// Written beneath the entry, through no link the install made.
	if err := untrusted.WriteFile(staging, readyFile, []byte(key), 0o644); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	if err := os.Rename(staging, entry); err != nil {
		return fmt.Errorf("node setup: %w", err)
	}
	return nil
}

// runnerScratch are the directories under node_modules that runners
// write on every run (vite bundles a TypeScript or ESM configuration into
// .vite-temp before loading it; vitest keeps its results in .vite): setup
// makes them empty, and each confined run writes them in a tmpfs of its own.
var runnerScratch = []string{".vite-temp", ".vite"}

// makeScratch makes runnerScratch's directories in modules, beneath it (a
// link the install put there is not followed, and the name stays taken).
func makeScratch(modules string) error {
	r, err := os.OpenRoot(modules)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, name := range runnerScratch {
		if err := r.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("the runners' scratch %s: %w", name, err)
		}
	}
	return nil
}

// maxSetupOutput caps the output an error of setup carries.
const maxSetupOutput = 8 << 10

// lockFile takes an exclusive lock on the file name, waiting for it as long
// as ctx lets; unlock releases it.
func lockFile(ctx context.Context, name string) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for the lock %s: %w", name, ctx.Err())
		case <-tick.C:
		}
	}
}
