// Package sandbox runs commands for redfix: in their own process group, with
// a timeout, a capped output and a scrubbed environment, so that a test that
// hangs, floods its output or reads the bot's credentials does no harm.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Cmd is one command to run.
type Cmd struct {
	Dir     string
	Args    []string
	Env     []string      // added to the scrubbed base environment
	Timeout time.Duration // 0 means DefaultTimeout
	// MaxOutput caps the combined output kept: the head and the tail are
	// kept, the middle is replaced by a marker. 0 means DefaultMaxOutput.
	MaxOutput int
	// Stdout, when set, takes the command's standard output as it comes,
	// whole (a pipe redfix reads, never a file the command could replace);
	// Output then keeps only its standard error.
	Stdout io.Writer
	// Setup marks a repository's dependency setup (a Python virtual
	// environment filled from a package index, node_modules from npm, Go
	// modules from a module proxy): the one kind of command that reaches
	// the network, through redfix's egress proxy to the package registries
	// it names (Registries) and the configured ones, never the host's
	// loopback or anything else; and the one that writes caches, those it
	// fills (Fill). Its tests never reach the network unless the
	// repository's network rule says so.
	Setup bool
	// Registries are the package registries (URLs, or host:port) a setup
	// reaches: its index, its module proxy.
	Registries []string
	// Fill are the cache directories a setup fills (made when missing):
	// writable to it, and read-only to every other command, which sees the
	// repository's cache directory read-only by its own path. Given only
	// with Setup; one in Config.CacheDir must lie in the repository's
	// cache for the run's trust (CacheDir), or the run is refused.
	Fill []string
	// Outbox is a directory of redfix's, outside the checkout, that the
	// command may write too: for files a tool must write (a coverage
	// profile, a test binary). What is read back from it is untrusted.
	Outbox string
	// ReadOnly are directories shown to the command read-only, each at its
	// Target (its Source when Target is ""), bound after the writable ones
	// so that they win: a cache shared between jobs (node_modules made
	// once per lockfile) that sits under a writable directory (the
	// repository's cache), or is shown inside the workspace. A Target
	// inside the workspace must exist (an empty directory), else
	// bubblewrap makes it there. Unconfined commands see the paths as
	// they are, writable.
	ReadOnly []Mount
	// Scratch are directories inside a read-only one (a ReadOnly mount) where
	// the command may write what no later command reads: each is an empty
	// tmpfs of the command's own, gone when it exits (a runner's bundled
	// configuration under node_modules). Each must exist as a directory.
	// Unconfined commands see the directories as they are.
	Scratch []string
	// Unconfined runs the command outside the sandbox even when ctx
	// carries a Box: for redfix's own git commands, which fetch over the
	// network and write outside one workspace. Never for a repository's
	// code (its tests, builds and tools).
	Unconfined bool
}

// Mount is a directory shown at another path (see Cmd.ReadOnly).
type Mount struct{ Source, Target string }

// Result is what a command did.
type Result struct {
	Output   string
	ExitCode int // -1 when it did not exit by itself
	TimedOut bool
	Duration time.Duration
}

// OK reports a zero exit.
func (r Result) OK() bool { return r.ExitCode == 0 && !r.TimedOut }

// Defaults for Cmd.
const (
	DefaultTimeout   = 10 * time.Minute
	DefaultMaxOutput = 256 << 10
)

// keptEnv are the variables of the host that commands may see. Everything
// else, tokens and keys in particular, is dropped.
var keptEnv = []string{
	"PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TERM",
	"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN", "CGO_ENABLED",
}

// Env is the scrubbed environment plus extra.
func Env(extra ...string) []string {
	var env []string
	for _, k := range keptEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	// Commits made inside workspaces need an identity, and must not read
	// the host's git configuration.
	env = append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
	)
	return append(env, extra...)
}

// Run runs cmd, confined by the Box that ctx carries (see With), or
// unconfined when it carries none. A non-zero exit is not an error: it is in
// the Result. The error reports a command that could not start or a
// cancelled context.
func Run(ctx context.Context, cmd Cmd) (Result, error) {
	if b := From(ctx); b != nil {
		return b.Run(ctx, cmd)
	}
	if len(cmd.Args) == 0 {
		return Result{}, errors.New("sandbox: empty command")
	}
	return run(ctx, cmd, Env(cmd.Env...), cmd.Args[0])
}

// run runs cmd with env in its own process group, killed with its parent;
// name is the command as errors call it.
func run(ctx context.Context, cmd Cmd, env []string, name string) (Result, error) {
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	max := cmd.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	c := exec.Command(cmd.Args[0], cmd.Args[1:]...)
	c.Dir = cmd.Dir
	c.Env = env
	out := newCappedBuffer(max)
	c.Stdout = out
	if cmd.Stdout != nil {
		c.Stdout = cmd.Stdout
	}
	c.Stderr = out
	// Its own group, so that a timeout kills every process it started, and
	// SIGKILL when the thread that started it dies (with redfix).
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	start := time.Now()
	if err := c.Start(); err != nil {
		return Result{}, fmt.Errorf("start %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()

	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// Kill the whole group: go test leaves test binaries behind otherwise.
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	res := Result{Output: out.String(), ExitCode: -1, Duration: time.Since(start)}
	if c.ProcessState != nil && c.ProcessState.Exited() {
		res.ExitCode = c.ProcessState.ExitCode()
	}
	// The group may still hold children that outlived the leader.
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	if parent.Err() != nil {
		return res, fmt.Errorf("run %s: %w", name, parent.Err())
	}
	if ctx.Err() != nil {
		res.TimedOut = true
		return res, nil
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("run %s: %w", name, err)
	}
	return res, nil
}

// cappedBuffer keeps the first and last halves of at most max bytes.
type cappedBuffer struct {
	mu      sync.Mutex
	max     int
	head    bytes.Buffer
	tail    []byte
	dropped int
}

func newCappedBuffer(max int) *cappedBuffer { return &cappedBuffer{max: max} }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	half := b.max / 2
	if room := half - b.head.Len(); room > 0 {
		k := min(room, len(p))
		b.head.Write(p[:k])
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - (b.max - half); over > 0 {
		b.dropped += over
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return b.head.String() + string(b.tail)
	}
	return fmt.Sprintf("%s\n… [%d bytes of output omitted] …\n%s", b.head.String(), b.dropped, b.tail)
}
