package node

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/untrusted"
)

// session is what an operation on a checkout runs with: its node_modules
// (in the cache), the outbox reports are written into, and how
// node_modules is shown to the checkout's commands.
type session struct {
	d       Driver
	dir     string
	modules string // "" when the checkout declares no package
	outbox  string
	mounts  []sandbox.Mount
	scratch []string
	node    string
	// titles are the declared titles of the tests asked for, by id (see
	// titlesOf): the runner's name pattern selects them exactly.
	titles map[string][]string
	undo   []func()
}

// session prepares the checkout at dir (see prepare) and makes its outbox.
//
// node_modules is shown at the checkout's root. Confined, it is mounted
// there read-only, and the driver's cache directory with it: a test that
// writes into node_modules (or into the cache by its own path) fails, and
// the next job finds the cache as setup made it. The mount point is an
// empty directory made for the run (git keeps no empty directory) and
// removed after it; a node_modules the checkout has is covered. What the
// runners write under node_modules (vite's bundled configuration in
// .vite-temp, vitest's results in .vite) goes to an empty tmpfs of the
// run's own over those directories (sandbox.Cmd.Scratch), which setup made
// empty: no later run reads it. Unconfined
// (no sandbox, or a host that cannot confine) node_modules is linked into
// the checkout for the run instead, and nothing is protected.
func (d Driver) session(ctx context.Context, dir string) (*session, error) {
	modules, err := d.prepare(ctx, dir)
	if err != nil {
		return nil, err
	}
	node, err := d.nodeBin()
	if err != nil {
		return nil, err
	}
	outbox, err := os.MkdirTemp("", "redfix-node-")
	if err != nil {
		return nil, fmt.Errorf("node: outbox: %w", err)
	}
	s := &session{d: d, dir: dir, modules: modules, outbox: outbox, node: node}
	s.undo = append(s.undo, func() { _ = os.RemoveAll(outbox) })
	if modules == "" {
		return s, nil
	}
	if err := s.show(ctx); err != nil {
		s.done()
		return nil, err
	}
	return s, nil
}

// show makes node_modules visible at the checkout's root (see session).
func (s *session) show(ctx context.Context) error {
	target := filepath.Join(s.dir, "node_modules")
	fi, err := untrusted.Lstat(s.dir, "node_modules")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("node: the checkout's node_modules: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("node: the checkout's node_modules is not a directory (%s): refused", fi.Mode().Type())
	}
	b := sandbox.From(ctx)
	if b != nil && b.Status().Confined {
		if err != nil {
			if err := os.Mkdir(target, 0o755); err != nil {
				return fmt.Errorf("node: mount point for node_modules: %w", err)
			}
			s.undo = append(s.undo, func() { _ = os.Remove(target) })
		}
		s.mounts = []sandbox.Mount{{Source: s.d.cacheRoot(ctx)}, {Source: s.modules, Target: target}}
		for _, name := range runnerScratch {
			// Only a directory setup made: a name the install took for a
			// link or a file stays as the install left it, read-only.
			if fi, err := os.Lstat(filepath.Join(s.modules, name)); err == nil && fi.IsDir() {
				s.scratch = append(s.scratch, filepath.Join(target, name))
			}
		}
		return nil
	}
	if err == nil {
		// The checkout's own node_modules stays; its packages are those
		// its tests find first.
		return nil
	}
	if err := os.Symlink(s.modules, target); err != nil {
		return fmt.Errorf("node: link node_modules: %w", err)
	}
	s.undo = append(s.undo, func() { _ = os.Remove(target) })
	return nil
}

// done undoes what the session made, last first.
func (s *session) done() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
}

// run runs a command of the repository's (a runner, a check) in the
// checkout: node first on PATH, no colours, CI's behaviour.
func (s *session) run(ctx context.Context, name string, timeout time.Duration, args []string, env ...string) (sandbox.Result, error) {
	env = append([]string{
		"PATH=" + filepath.Dir(s.node) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"CI=true", "NO_COLOR=1", "FORCE_COLOR=0", "NODE_ENV=test",
	}, env...)
	if wasmTrapHandlerOption(s.node) {
		// WebAssembly's guard regions reserve gigabytes of address space
		// per instance, more than the sandbox's memory limit (RLIMIT_AS)
		// allows: vite's parser is WebAssembly. Bounds checks instead.
		env = append(env, "NODE_OPTIONS=--disable-wasm-trap-handler")
	}
	res, err := sandbox.Run(ctx, sandbox.Cmd{
		Dir: s.dir, Args: args, Env: env, Timeout: timeout, MaxOutput: s.d.MaxOutput,
		Outbox: s.outbox, ReadOnly: s.mounts, Scratch: s.scratch,
	})
	if err != nil {
		return res, fmt.Errorf("%s in %s: %w", name, s.dir, err)
	}
	return res, nil
}

// bin is the path of a package's script in node_modules ("vitest/vitest.mjs").
func (s *session) bin(rel string) string {
	return filepath.Join(s.dir, "node_modules", filepath.FromSlash(rel))
}

// write writes one of redfix's files (a reporter) into the outbox.
func (s *session) write(name, content string) (string, error) {
	p := filepath.Join(s.outbox, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("node: write %s: %w", name, err)
	}
	return p, nil
}

// readOutbox reads a report a command wrote into the outbox: a regular
// file, never through a link, at most max bytes.
func (s *session) readOutbox(name string, max int64) ([]byte, error) {
	data, err := untrusted.ReadFile(s.outbox, name, max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s was not written: %w", name, err)
	}
	return data, err
}

//go:embed scripts/mocha-reporter.cjs
var mochaReporter string

//go:embed scripts/node-reporter.mjs
var nodeReporter string

var wasmOptions sync.Map // node binary → whether it takes --disable-wasm-trap-handler

// wasmTrapHandlerOption reports a node that takes
// --disable-wasm-trap-handler (20.15 and later).
func wasmTrapHandlerOption(node string) bool {
	if v, ok := wasmOptions.Load(node); ok {
		return v.(bool)
	}
	out, _ := exec.Command(node, "--help").Output()
	ok := strings.Contains(string(out), "--disable-wasm-trap-handler")
	wasmOptions.Store(node, ok)
	return ok
}
