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
	"sync/atomic"
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
	// util-linux prlimit binary that sets the resource limits; Setpriv the
	// util-linux setpriv binary that drops a root redfix's commands to UID.
	Bwrap, Prlimit, Setpriv string
	// Network lets every repository's commands use the host's network;
	// NetworkRepos lets those of repositories matching one of the patterns
	// (path.Match, on the repository as the job names it). Without it a
	// command has no network at all, and a dependency setup reaches only
	// package registries (Registries, and those its driver names), through
	// redfix's egress proxy.
	Network      bool
	NetworkRepos []string
	// Registries are package registries (URLs, or host:port) that every
	// setup may reach on top of those its driver names: a mirror's file
	// host, say.
	Registries []string
	// Limits for each process of a command (0: the defaults below).
	Memory   int64         // address space, bytes (RLIMIT_AS)
	CPUTime  time.Duration // CPU time (RLIMIT_CPU)
	FileSize int64         // largest file written, bytes (RLIMIT_FSIZE)
	Procs    int           // processes of the sandbox's user (RLIMIT_NPROC)
	TmpSize  int64         // the private /tmp and $HOME, bytes each
	// UID and GID are the host user and group a confined command runs as
	// when redfix runs as root: one that owns nothing, so that owner
	// permissions give a test nothing (0: DefaultUID, DefaultGID). An
	// unprivileged redfix's commands run as its own user, through a user
	// namespace.
	UID, GID int
	// CacheDir holds each repository's caches (its Go build and module
	// caches, virtual environments, node_modules), one directory per
	// repository and trust (see WithUntrusted).
	CacheDir string
	// SharedCache gives every repository of one trust one cache under
	// CacheDir instead of its own: builds are warm sooner, but one
	// repository's setup then fills what another's builds read. For
	// repositories that trust one another (one organisation's), and for
	// the demo's sample.
	SharedCache bool
	// SeedCache keeps the seed every repository's Go builds read under
	// their own cache (see seed.go): "" is DefaultSeedCache, SeedOff none.
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
	// DefaultUID and DefaultGID are nobody and nogroup: by convention a
	// user and group that own no file.
	DefaultUID = 65534
	DefaultGID = 65534
)

// Status is what the host gives: whether commands are confined and how.
type Status struct {
	Confined bool   `json:"confined"`
	How      string `json:"how"`    // "bubblewrap, user namespace", "bubblewrap", "none"
	Limits   bool   `json:"limits"` // resource limits are applied
	// User is the host user the commands run as: "uid 65534" (a root
	// redfix's, dropped), "redfix's own uid 1000" (an unprivileged one's).
	User   string `json:"user,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (s Status) String() string {
	str := s.How
	if s.User != "" {
		str += ", as " + s.User
	}
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
	// setpriv drops a root redfix's commands to cfg.UID; "" when redfix
	// is not root, whose commands run in a user namespace instead.
	setpriv string
	status  Status
	// The Go toolchain's own directories, shown read-only inside.
	goroot, modcache string
	// goproxy is the host's GOPROXY, which a Go setup step fetches
	// through (the Go driver names its endpoints, Cmd.Registries).
	goproxy string
	home    string
	// The seed's making, one at a time, and why it failed if it did.
	seedMu   sync.Mutex
	seedErr  error
	seedPath atomic.Pointer[string]
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
	if cfg.UID == 0 {
		cfg.UID = DefaultUID
	}
	if cfg.GID == 0 {
		cfg.GID = DefaultGID
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
	case os.Geteuid() == 0 && lookPath(cfg.Setpriv, "setpriv") == "" && !untrusted.Trusting:
		why = "setpriv (util-linux) is not installed: a root redfix's commands would run as root"
	default:
		if os.Geteuid() == 0 && !untrusted.Trusting {
			// (The boundaries off, a root redfix's commands run as root
			// in a user namespace, as before the sandbox's own user.)
			b.setpriv = lookPath(cfg.Setpriv, "setpriv")
		}
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
		b.bwrap, b.setpriv = "", ""
		b.status.How, b.status.Reason = "none", why
		if cfg.Mode == ModeRequired {
			return nil, fmt.Errorf("%w: %s", ErrCannotConfine, why)
		}
		return b, nil
	}
	b.status.Confined = true
	b.status.How = "bubblewrap"
	if b.setpriv != "" {
		b.status.User = fmt.Sprintf("uid %d", cfg.UID)
	} else {
		b.status.How += ", user namespace"
		b.status.User = fmt.Sprintf("redfix's own uid %d", os.Getuid())
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
	for _, bin := range []*string{&cfg.Bwrap, &cfg.Prlimit, &cfg.Setpriv} {
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

// probe runs a trivial command in the sandbox the box would build,
// hiding hide: a root redfix's dropped to its UID, an unprivileged one's in
// a user namespace.
func (b *Box) probe(ctx context.Context, hide []string) error {
	dir, err := os.MkdirTemp("", "redfix-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := b.own(dir); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args, err := b.wrap(ctx, Cmd{Dir: dir, Args: []string{"true"}}, mounts{ws: dir, hide: hide})
	if err != nil {
		return err
	}
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

// cacheFor is the cache directory of repo's commands at a trust: a run of
// an untrusted source (a fork's pull request) has caches of its own, which
// no trusted run reads.
func (b *Box) cacheFor(repo string, untrusted bool) string {
	suffix := ""
	if untrusted {
		suffix = "-untrusted"
	}
	if b.cfg.SharedCache {
		return filepath.Join(b.cfg.CacheDir, "shared"+suffix)
	}
	if repo == "" {
		repo = "unnamed"
	}
	key := repo
	if untrusted {
		key += "\x00untrusted"
	}
	sum := sha256.Sum256([]byte(key))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(strings.TrimSuffix(repo, ".git")))
	if len(base) > 40 {
		base = base[:40]
	}
	return filepath.Join(b.cfg.CacheDir, base+suffix+"-"+hex.EncodeToString(sum[:6]))
}
