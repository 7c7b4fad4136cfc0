package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redfix/redfix/pkg/untrusted"
)

// Modes of confinement.
const (
	// ModeAuto confines where the host can, and runs commands unconfined
	// (with a warning at start) where it cannot.
	ModeAuto = "auto"
	// ModeRequired refuses to start where the host cannot confine.
	ModeRequired = "required"
	// ModeOff never confines: commands run as the bot's own user, with the
	// bot's view of the machine and its network.
	ModeOff = "off"
)

// Config says how commands run on a repository's behalf are confined.
type Config struct {
	Mode string // ModeAuto (""), ModeRequired or ModeOff
	// Bwrap is the bubblewrap binary ("" finds bwrap on PATH); Prlimit the
	// util-linux prlimit binary that sets the resource limits.
	Bwrap, Prlimit string
	// Network lets every repository's commands use the network;
	// NetworkRepos lets those of repositories matching one of the patterns
	// (path.Match, on the repository as the job names it).
	Network      bool
	NetworkRepos []string
	// Limits for each process of a command (0: the defaults below).
	Memory   int64         // address space, bytes (RLIMIT_AS)
	CPUTime  time.Duration // CPU time (RLIMIT_CPU)
	FileSize int64         // largest file written, bytes (RLIMIT_FSIZE)
	Procs    int           // processes of the sandbox's user (RLIMIT_NPROC), unconfined runs excepted
	TmpSize  int64         // the private /tmp and $HOME, bytes each
	// CacheDir holds each repository's own Go build cache (and module
	// cache, for repositories allowed the network).
	CacheDir string
	// SharedCache gives every repository one cache under CacheDir instead
	// of its own: builds are warm sooner, but a repository's tests can
	// then poison what another's build reads. For repositories that trust
	// one another (one organisation's), and for the demo's sample.
	SharedCache bool
	// SeedCache keeps the seed every repository's new cache starts from
	// (see seed.go): "" is DefaultSeedCache, SeedOff none.
	SeedCache string
	// Hide are paths the commands must not read: the data directory, the
	// configuration file, secret files, the publish directory. The
	// workspace and the caches are shown again inside them.
	Hide []string
}

// Defaults for Config.
const (
	DefaultMemory   = 4 << 30
	DefaultCPUTime  = 10 * time.Minute
	DefaultFileSize = 1 << 30
	DefaultProcs    = 4096
	DefaultTmpSize  = 1 << 30
)

// Status is what the host gives: whether commands are confined and how.
type Status struct {
	Confined bool   `json:"confined"`
	How      string `json:"how"`    // "bubblewrap, user namespace", "bubblewrap", "none"
	Limits   bool   `json:"limits"` // resource limits are applied
	Reason   string `json:"reason,omitempty"`
}

func (s Status) String() string {
	str := s.How
	if s.Limits {
		str += ", resource limits"
	} else {
		str += ", no resource limits"
	}
	if s.Reason != "" {
		str += " (" + s.Reason + ")"
	}
	return str
}

// Box confines commands as its Config says. It is safe for concurrent use.
type Box struct {
	cfg     Config
	bwrap   string
	prlimit string
	userns  bool
	status  Status
	// The Go toolchain's own directories, shown read-only inside.
	goroot, modcache string
	// goproxy is the host's GOPROXY, which a Go setup step fetches
	// through.
	goproxy string
	home    string
	// The seed's making, one at a time, and why it failed if it did.
	seedMu  sync.Mutex
	seedErr error
}

// ErrCannotConfine is returned by New in ModeRequired on a host that
// cannot confine.
var ErrCannotConfine = errors.New("this host cannot confine commands")

// New probes the host and returns a Box. It fails only in ModeRequired on a
// host that cannot confine, or on a configuration that cannot work: a
// hidden path that bubblewrap cannot hide is named, in every mode, rather
// than taken for a host that cannot confine. Relative paths in cfg are
// taken from the working directory now. A hidden path that does not exist
// is not an error: there is nothing to hide yet, and each command hides
// what exists when it starts.
func New(ctx context.Context, cfg Config) (*Box, error) {
	switch cfg.Mode {
	case "":
		cfg.Mode = ModeAuto
	case ModeAuto, ModeRequired, ModeOff:
	default:
		return nil, fmt.Errorf("sandbox mode %q: want auto, required or off", cfg.Mode)
	}
	for _, p := range cfg.NetworkRepos {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("sandbox network pattern %q: %w", p, err)
		}
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.CPUTime == 0 {
		cfg.CPUTime = DefaultCPUTime
	}
	if cfg.FileSize == 0 {
		cfg.FileSize = DefaultFileSize
	}
	if cfg.Procs == 0 {
		cfg.Procs = DefaultProcs
	}
	if cfg.TmpSize == 0 {
		cfg.TmpSize = DefaultTmpSize
	}
	if cfg.CacheDir == "" {
		// The user's own: a directory every user shared would let one
		// user's builds poison another's.
		cfg.CacheDir = filepath.Join(os.TempDir(), "redfix-"+strconv.Itoa(os.Getuid()), "cache")
	}
	if cfg.SeedCache == "" {
		cfg.SeedCache = DefaultSeedCache()
	}
	if err := absolute(&cfg); err != nil {
		return nil, err
	}
	b := &Box{cfg: cfg, home: os.Getenv("HOME")}

	b.prlimit = lookPath(cfg.Prlimit, "prlimit")
	b.status.Limits = b.prlimit != ""

	if cfg.Mode == ModeOff {
		b.status = Status{How: "none", Limits: b.status.Limits, Reason: "sandbox mode is off"}
		return b, nil
	}
	b.bwrap = lookPath(cfg.Bwrap, "bwrap")
	var why string
	switch {
	case b.bwrap == "":
		why = "bubblewrap (bwrap) is not installed"
	default:
		b.goroot, b.modcache, b.goproxy = goEnv(ctx)
		err := b.probe(ctx, cfg.Hide)
		if err != nil && len(cfg.Hide) > 0 && b.probe(ctx, nil) == nil {
			// The host confines: what fails is hiding a configured path.
			return nil, b.hideError(ctx, err)
		}
		if err != nil {
			why = "bubblewrap cannot set up a sandbox here: " + err.Error()
		}
	}
	if why != "" {
		b.bwrap = ""
		b.status.How, b.status.Reason = "none", why
		if cfg.Mode == ModeRequired {
			return nil, fmt.Errorf("%w: %s", ErrCannotConfine, why)
		}
		return b, nil
	}
	b.status.Confined = true
	b.status.How = "bubblewrap"
	if b.userns {
		b.status.How += ", user namespace"
	}
	if !b.status.Limits {
		b.status.Reason = "prlimit (util-linux) is not installed"
	}
	return b, nil
}

// Status says what the host gives.
func (b *Box) Status() Status { return b.status }

// Config is the configuration the box runs with, defaults filled in.
func (b *Box) Config() Config { return b.cfg }

func lookPath(given, name string) string {
	if given != "" {
		name = given
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// absolute makes every path the box binds or hides absolute, against the
// working directory now: bubblewrap takes a relative destination inside
// the sandbox's own root, where it cannot be created, and the probe would
// blame the host for a relative path in the configuration.
func absolute(cfg *Config) error {
	abs := func(what string, p *string) error {
		if *p == "" || filepath.IsAbs(*p) {
			return nil
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("sandbox: %s %q: %w", what, *p, err)
		}
		*p = a
		return nil
	}
	if cfg.SeedCache != SeedOff {
		if err := abs("seed cache", &cfg.SeedCache); err != nil {
			return err
		}
	}
	if err := abs("cache directory", &cfg.CacheDir); err != nil {
		return err
	}
	for _, bin := range []*string{&cfg.Bwrap, &cfg.Prlimit} {
		if strings.ContainsRune(*bin, filepath.Separator) {
			if err := abs("binary", bin); err != nil {
				return err
			}
		}
	}
	hide := make([]string, 0, len(cfg.Hide))
	for _, p := range cfg.Hide {
		if p == "" {
			continue
		}
		if err := abs("hidden path", &p); err != nil {
			return err
		}
		hide = append(hide, p)
	}
	cfg.Hide = hide
	return nil
}

// hideError names the hidden paths that bubblewrap cannot hide, each
// probed alone; all is what the probe with every one of them said.
func (b *Box) hideError(ctx context.Context, all error) error {
	var bad []string
	for _, p := range b.cfg.Hide {
		if err := b.probe(ctx, []string{p}); err != nil {
			bad = append(bad, fmt.Sprintf("%s (%v)", p, err))
		}
	}
	if len(bad) == 0 {
		return fmt.Errorf("sandbox: bubblewrap works here, but not while hiding the configured paths %s together: %w", strings.Join(b.cfg.Hide, ", "), all)
	}
	return fmt.Errorf("sandbox: bubblewrap works here, but cannot hide %s from the commands: check these paths in the configuration (data directory, configuration file, secret files, publish and mirror directories)",
		strings.Join(bad, "; "))
}

// probe runs a trivial command in the sandbox the box would build, hiding
// hide. It tries with a user namespace, then without, and settles
// b.userns on the first that works: with a user namespace the commands run
// as an ordinary user even when redfix runs as root; without one (allowed
// to root only) they run as root with no capabilities.
func (b *Box) probe(ctx context.Context, hide []string) error {
	b.userns = true
	err := b.probeOnce(ctx, hide)
	if err == nil {
		return nil
	}
	b.userns = false
	err2 := b.probeOnce(ctx, hide)
	if err2 == nil {
		return nil
	}
	if err.Error() == err2.Error() {
		return err
	}
	return fmt.Errorf("%v; without a user namespace: %v", err, err2)
}

func (b *Box) probeOnce(ctx context.Context, hide []string) error {
	dir, err := os.MkdirTemp("", "redfix-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := b.wrapHiding(Cmd{Dir: dir, Args: []string{"true"}}, "", dir, "", hide)
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Env = Env()
	out, err := c.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return errors.New(msg)
	}
	return nil
}

// networkFor reports whether repo's commands may use the network.
func (b *Box) networkFor(repo string) bool {
	if b.cfg.Network {
		return true
	}
	for _, p := range b.cfg.NetworkRepos {
		if ok, _ := path.Match(p, repo); ok {
			return true
		}
	}
	return false
}

// cacheFor is repo's own cache directory.
func (b *Box) cacheFor(repo string) string {
	if b.cfg.SharedCache {
		return filepath.Join(b.cfg.CacheDir, "shared")
	}
	if repo == "" {
		repo = "unnamed"
	}
	sum := sha256.Sum256([]byte(repo))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(strings.TrimSuffix(repo, ".git")))
	if len(base) > 40 {
		base = base[:40]
	}
	return filepath.Join(b.cfg.CacheDir, base+"-"+hex.EncodeToString(sum[:6]))
}

// limitArgs is the prlimit prefix that sets the resource limits.
func (b *Box) limitArgs(confined bool) []string {
	if b.prlimit == "" {
		return nil
	}
	args := []string{b.prlimit,
		"--as=" + strconv.FormatInt(b.cfg.Memory, 10),
		"--cpu=" + strconv.FormatInt(int64(b.cfg.CPUTime/time.Second), 10),
		"--fsize=" + strconv.FormatInt(b.cfg.FileSize, 10),
		"--core=0",
	}
	if confined && os.Geteuid() != 0 {
		// RLIMIT_NPROC counts every process of the real user: for root that
		// is the whole machine, so it is set only for an ordinary user.
		args = append(args, "--nproc="+strconv.Itoa(b.cfg.Procs))
	}
	return append(args, "--")
}

// wrap is the command line that runs cmd confined: bubblewrap around it,
// prlimit around bubblewrap. The host's file system is visible read-only,
// minus the hidden paths; ws (the workspace) and cache are writable; /tmp
// and $HOME are private and empty.
func (b *Box) wrap(cmd Cmd, repo, ws, cache string) []string {
	return b.wrapHiding(cmd, repo, ws, cache, b.cfg.Hide)
}

// wrapHiding is wrap with hidden paths of its own (the probe's).
func (b *Box) wrapHiding(cmd Cmd, repo, ws, cache string, hidden []string) []string {
	args := b.limitArgs(true)
	args = append(args, b.bwrap,
		"--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	)
	if !b.networkFor(repo) && !cmd.Setup {
		args = append(args, "--unshare-net")
	}
	if b.userns {
		args = append(args, "--unshare-user", "--uid", "1000", "--gid", "1000", "--disable-userns")
	} else {
		args = append(args, "--cap-drop", "ALL")
	}
	args = append(args,
		"--ro-bind", "/", "/",
		"--proc", "/proc",
		"--dev", "/dev",
		"--size", strconv.FormatInt(b.cfg.TmpSize, 10), "--tmpfs", "/tmp",
	)
	hide := func(p string) {
		if p == "" || p == "/" {
			return
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return
		case fi.IsDir():
			args = append(args, "--size", strconv.FormatInt(b.cfg.TmpSize, 10), "--tmpfs", p)
		default:
			args = append(args, "--ro-bind", "/dev/null", p)
		}
	}
	hide(b.home)
	for _, p := range hidden {
		hide(p)
	}
	hide("/run/secrets")
	// The toolchain is shown again, read-only, wherever it lives.
	for _, p := range []string{b.goroot, b.modcache} {
		if p != "" {
			args = append(args, "--ro-bind-try", p, p)
		}
	}
	if cache != "" {
		args = append(args, "--bind", cache, cache)
	}
	args = append(args, "--bind", ws, ws)
	if cmd.Outbox != "" {
		args = append(args, "--bind", cmd.Outbox, cmd.Outbox)
	}
	// A checkout keeps its git directory apart, out of view; a
	// repository whose .git is in its work tree (one redfix made, a
	// person's) has it kept read-only, file or directory, so that nothing
	// written there reaches a git command later.
	if fi, err := os.Lstat(filepath.Join(ws, ".git")); err == nil && (fi.IsDir() || !untrusted.Trusting) {
		args = append(args, "--ro-bind", filepath.Join(ws, ".git"), filepath.Join(ws, ".git"))
	}
	for _, m := range cmd.ReadOnly {
		target := m.Target
		if target == "" {
			target = m.Source
		}
		args = append(args, "--ro-bind", m.Source, target)
	}
	dir := cmd.Dir
	if dir == "" {
		dir = ws
	}
	args = append(args, "--chdir", dir, "--")
	return append(args, cmd.Args...)
}

// Run runs cmd confined (or as today, unconfined, where the host cannot
// confine). The repository it runs for is the one named with WithRepo on
// ctx: it decides the caches and whether the network is allowed.
func (b *Box) Run(ctx context.Context, cmd Cmd) (Result, error) {
	if len(cmd.Args) == 0 {
		return Result{}, errors.New("sandbox: empty command")
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
	cache := b.cacheFor(repo)
	if err := b.prepareCache(ctx, cache); err != nil {
		return Result{}, fmt.Errorf("sandbox: cache for %s: %w", repo, err)
	}
	env := b.env(repo, cache, cmd.Env, cmd.Setup)
	cmd.Args = b.wrap(cmd, repo, ws, cache)
	return run(ctx, cmd, env, name)
}

// CacheDir is the directory the commands of the repository named on ctx
// keep their caches in (a Go build cache, a Python virtual environment,
// node_modules by lockfile): writable to its commands, and to them only
// unless the caches are shared. Without a Box on ctx it is a directory of
// the system's temporary directory.
func CacheDir(ctx context.Context) string {
	if b := From(ctx); b != nil {
		return b.cacheFor(RepoFrom(ctx))
	}
	return filepath.Join(os.TempDir(), "redfix", "cache", "unconfined")
}

type ctxKey int

const (
	boxKey ctxKey = iota
	repoKey
	treeKey
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
