package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/egress"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Run runs cmd confined (or as today, unconfined, where the host cannot
// confine). The repository it runs for is the one named with WithRepo on
// ctx, at the trust WithUntrusted names: they decide the caches and
// whether the network is allowed.
func (b *Box) Run(ctx context.Context, cmd Cmd) (Result, error) {
	if len(cmd.Args) == 0 {
		return Result{}, errors.New("sandbox: empty command")
	}
	if len(cmd.Fill) > 0 && !cmd.Setup {
		return Result{}, errors.New("sandbox: only a setup fills caches")
	}
	name := cmd.Args[0]
	if cmd.Unconfined || !b.status.Confined {
		if !cmd.Unconfined {
			cmd.Args = append(b.limitArgs(false), cmd.Args...)
		}
		return run(ctx, cmd, Env(cmd.Env...), name)
	}
	repo := RepoFrom(ctx)
	dir := cmd.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Result{}, fmt.Errorf("sandbox: working directory: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: %w", err)
	}
	cmd.Dir = dir
	// The tree the command may write: the workspace named on ctx when the
	// command runs inside it, else only its own directory.
	ws := TreeFrom(ctx)
	if ws == "" || !(dir == ws || strings.HasPrefix(dir, ws+string(filepath.Separator))) {
		ws = dir
	}
	m := mounts{ws: ws, cache: b.cacheFor(repo, Untrusted(ctx)), fill: cmd.Fill, hide: b.cfg.Hide, hostNetwork: b.networkFor(repo)}
	if untrusted.Trusting && cmd.Setup {
		// The boundaries off (a redfix_trusting build): a setup keeps the
		// host's network, as before the egress proxy.
		m.hostNetwork = true
	}
	if m.hostNetwork {
		// Its tests may fetch modules: the boundary is the operator's to
		// lift (sandbox.network), and lifted for its module cache too.
		m.fill = append(m.fill, filepath.Join(m.cache, "mod"))
	}
	if err := b.checkFills(m.cache, m.fill, false); err != nil {
		return Result{}, err
	}
	if err := b.prepareCache(ctx, m.cache); err != nil {
		return Result{}, fmt.Errorf("sandbox: cache for %s: %w", repo, err)
	}
	for _, f := range m.fill {
		if err := os.MkdirAll(f, 0o755); err != nil {
			return Result{}, fmt.Errorf("sandbox: fill directory: %w", err)
		}
	}
	if err := b.checkFills(m.cache, m.fill, true); err != nil {
		return Result{}, err
	}
	// Two setups that fill one directory (a package manager's download
	// cache, shared by a repository's lockfiles) run one after the other:
	// one giving the directory back to redfix's user (seal) while the
	// other still writes it as the sandbox's would fail the second.
	unlock, err := lockFills(ctx, m.fill)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	scratch, err := os.MkdirTemp(b.scratchRoot(), "run-")
	if err != nil {
		return Result{}, fmt.Errorf("sandbox: scratch directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	m.scratch = scratch
	if err := b.ownAll(append([]string{ws, cmd.Outbox, scratch}, m.fill...)...); err != nil {
		return Result{}, err
	}
	if cmd.Setup && !m.hostNetwork {
		stop, proxy, err := b.startEgress(ctx, &m, cmd.Registries)
		if err != nil {
			return Result{}, err
		}
		defer stop()
		res, err := b.runIn(ctx, cmd, m, name)
		if refused := proxy.Refused(); len(refused) > 0 {
			res.Output += fmt.Sprintf("\nredfix: the setup tried to reach %s, which %s not a configured package registry (the driver's, or sandbox.registries)",
				strings.Join(refused, ", "), map[bool]string{true: "is", false: "are"}[len(refused) == 1])
		}
		return res, err
	}
	return b.runIn(ctx, cmd, m, name)
}

// runIn runs cmd in the sandbox m describes; a setup's fill directories
// are given back to redfix's user when it ends.
func (b *Box) runIn(ctx context.Context, cmd Cmd, m mounts, name string) (Result, error) {
	env := b.env(m, cmd)
	args, err := b.wrap(ctx, cmd, m)
	if err != nil {
		return Result{}, err
	}
	cmd.Args = args
	res, runErr := run(ctx, cmd, env, name)
	if err := b.seal(m.fill...); err != nil && runErr == nil {
		runErr = err
	}
	return res, runErr
}

// startEgress starts a setup's egress proxy on a Unix socket of its own,
// allowing the registries named and the configured ones.
func (b *Box) startEgress(ctx context.Context, m *mounts, registries []string) (stop func(), p *egress.Proxy, err error) {
	allow, err := egress.ParseAllow(append(append([]string(nil), b.cfg.Registries...), registries...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	dir, err := os.MkdirTemp("", "redfix-egress-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: egress: %w", err)
	}
	sock := filepath.Join(dir, "egress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("sandbox: egress: %w", err)
	}
	// The sandbox's user connects: the directory (0700) keeps others out.
	if err := os.Chmod(sock, 0o666); err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("sandbox: egress: %w", err)
	}
	p = egress.NewProxy(allow)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Serve(ctx, ln)
	}()
	m.egress = &egressRun{socket: sock, forward: allow.Loopback()}
	return func() {
		cancel()
		ln.Close()
		<-done
		os.RemoveAll(dir)
	}, p, nil
}

// scratchRoot is where commands' scratch directories are made: beside the
// caches, on the same file system.
func (b *Box) scratchRoot() string {
	dir := filepath.Join(b.cfg.CacheDir, ".scratch")
	_ = os.MkdirAll(dir, 0o700)
	return dir
}

// CacheDir is the directory the commands of the repository named on ctx
// keep their caches in (a Go build cache, a Python virtual environment,
// node_modules by lockfile), at the trust ctx names: read-only to its
// commands but for the setups that fill it (Cmd.Fill). Without a Box on
// ctx it is a directory of the system's temporary directory.
func CacheDir(ctx context.Context) string {
	if b := From(ctx); b != nil {
		return b.cacheFor(RepoFrom(ctx), Untrusted(ctx))
	}
	dir := "unconfined"
	if Untrusted(ctx) {
		dir += "-untrusted"
	}
	return filepath.Join(os.TempDir(), "redfix", "cache", dir)
}

type ctxKey int

const (
	boxKey ctxKey = iota
	repoKey
	treeKey
	untrustedKey
)

// WithTree names the tree (a workspace's work tree, absolute) that ctx's
// commands may write when they run inside it.
func WithTree(ctx context.Context, dir string) context.Context {
	return context.WithValue(ctx, treeKey, filepath.Clean(dir))
}

// TreeFrom is the tree named on ctx, "" when none is.
func TreeFrom(ctx context.Context) string {
	d, _ := ctx.Value(treeKey).(string)
	return d
}

// With returns a context whose commands (through Run) are confined by b.
func With(ctx context.Context, b *Box) context.Context { return context.WithValue(ctx, boxKey, b) }

// From is the Box on ctx, nil when there is none.
func From(ctx context.Context) *Box {
	b, _ := ctx.Value(boxKey).(*Box)
	return b
}

// WithRepo names the repository that ctx's commands run for.
func WithRepo(ctx context.Context, repo string) context.Context {
	return context.WithValue(ctx, repoKey, repo)
}

// RepoFrom is the repository named on ctx, "" when none is.
func RepoFrom(ctx context.Context) string {
	r, _ := ctx.Value(repoKey).(string)
	return r
}

// WithUntrusted says that ctx's commands run a source the repository does
// not control (a fork's pull request): their caches are their own, and no
// trusted run reads what their setups fill.
func WithUntrusted(ctx context.Context) context.Context {
	return context.WithValue(ctx, untrustedKey, true)
}

// Untrusted reports a context of WithUntrusted.
func Untrusted(ctx context.Context) bool {
	u, _ := ctx.Value(untrustedKey).(bool)
	return u
}
