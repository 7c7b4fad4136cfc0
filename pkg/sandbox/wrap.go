package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/untrusted"
)

// mounts are what a command's sandbox shows beyond the host's file system,
// read-only.
type mounts struct {
	ws      string   // the tree the command may write
	cache   string   // the repository's cache directory: read-only ("" none)
	fill    []string // directories the setup fills: writable to it alone
	scratch string   // the command's own scratch directory, writable
	hide    []string // paths the command must not read
	// egress is the setup's way out (see pkg/egress): the proxy's socket
	// and the loopback registries the relay forwards; nil runs the
	// command without one.
	egress *egressRun
	// hostNetwork keeps the host's network (sandbox.network).
	hostNetwork bool
	// goEnvOff runs go with no layered build cache (the seed's build).
	goEnvOff bool
}

// egressRun is a setup's connection to its egress proxy.
type egressRun struct {
	socket  string
	forward []string
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
	if confined && (os.Geteuid() != 0 || b.setpriv != "") {
		// RLIMIT_NPROC counts every process of the real user: for root
		// that is the whole machine, so it is set only where the
		// commands run as an ordinary user (a root redfix's commands do,
		// once setpriv has dropped them).
		args = append(args, "--nproc="+strconv.Itoa(b.cfg.Procs))
	}
	return append(args, "--")
}

// bwrapArgs builds bubblewrap's command line. Directories bubblewrap makes
// for a mount point inside one of the sandbox's own tmpfs (its /tmp and
// $HOME, a hidden directory) are made world-readable first: it would
// otherwise copy the modes of the host's directories there, and a dropped
// user could not reach a workspace under a directory of mode 0700.
type bwrapArgs struct {
	args  []string
	tmpfs []string
	made  map[string]bool
}

func (a *bwrapArgs) add(xs ...string) { a.args = append(a.args, xs...) }

// mountTmpfs mounts an empty tmpfs of size bytes at p with the given mode.
func (a *bwrapArgs) mountTmpfs(p string, size int64, perms string) {
	a.parents(p)
	a.made[p] = true
	a.add("--perms", perms, "--size", strconv.FormatInt(size, 10), "--tmpfs", p)
	a.tmpfs = append(a.tmpfs, p)
}

// parents makes the directories above target that lie inside a tmpfs.
func (a *bwrapArgs) parents(target string) {
	var chain []string
	for p := filepath.Dir(target); p != "/" && p != "."; p = filepath.Dir(p) {
		chain = append(chain, p)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		p := chain[i]
		if a.made[p] || !a.inTmpfs(p) {
			continue
		}
		a.made[p] = true
		a.add("--perms", "0755", "--dir", p)
	}
}

func (a *bwrapArgs) inTmpfs(p string) bool {
	for _, t := range a.tmpfs {
		if strings.HasPrefix(p, t+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// bind shows src at dst: kind is --bind, --ro-bind or --ro-bind-try.
func (a *bwrapArgs) bind(kind, src, dst string) {
	a.parents(dst)
	a.made[dst] = true
	a.add(kind, src, dst)
}

// wrap is the command line that runs cmd confined: bubblewrap around it,
// prlimit around bubblewrap, setpriv (a root redfix's) and the egress
// relay (a setup's) inside. The host's file system is visible read-only,
// minus the hidden paths; the tree and the outbox are writable, and the
// setup's fill directories; /tmp and $HOME are private and empty.
func (b *Box) wrap(ctx context.Context, cmd Cmd, m mounts) ([]string, error) {
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: redfix's own binary, shown as the sandbox's helper: %w", err)
	}
	a := &bwrapArgs{made: map[string]bool{}}
	a.add(b.limitArgs(true)...)
	a.add(b.bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
	if !m.hostNetwork {
		a.add("--unshare-net")
	}
	if b.setpriv != "" {
		// Root without a user namespace: the capabilities setpriv needs to
		// drop the command to the sandbox's user, and the one bubblewrap
		// needs to enter a directory that user owns; setpriv drops them all.
		a.add("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_DAC_READ_SEARCH")
	} else {
		a.add("--unshare-user", "--uid", "1000", "--gid", "1000", "--disable-userns")
	}
	a.add("--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev")
	a.mountTmpfs("/tmp", b.cfg.TmpSize, "01777")
	b.hidePaths(a, m.hide)
	// The toolchain is shown again, read-only, wherever it lives.
	for _, p := range []string{b.goroot, b.modcache} {
		if p != "" {
			a.bind("--ro-bind-try", p, p)
		}
	}
	if m.cache != "" {
		kind := "--ro-bind"
		if untrusted.Trusting {
			// The boundaries off: every command writes the caches.
			kind = "--bind"
		}
		a.bind(kind, m.cache, m.cache)
	}
	if seed := b.seedDir(); seed != "" && !m.goEnvOff {
		// At a path of the sandbox's own: the seed's directory on the
		// host may lie beneath one the sandbox's user cannot enter (the
		// user cache directory's redfix, a data directory of mode 0700).
		a.bind("--ro-bind-try", seed, seedMount)
	}
	for _, f := range m.fill {
		a.bind("--bind", f, f)
	}
	if m.scratch != "" {
		a.bind("--bind", m.scratch, m.scratch)
	}
	a.bind("--bind", m.ws, m.ws)
	if cmd.Outbox != "" {
		a.bind("--bind", cmd.Outbox, cmd.Outbox)
	}
	// A checkout keeps its git directory apart, out of view; a
	// repository whose .git is in its work tree (one redfix made, a
	// person's) has it kept read-only, file or directory, so that nothing
	// written there reaches a git command later.
	if fi, err := os.Lstat(filepath.Join(m.ws, ".git")); err == nil && (fi.IsDir() || !untrusted.Trusting) {
		a.bind("--ro-bind", filepath.Join(m.ws, ".git"), filepath.Join(m.ws, ".git"))
	}
	for _, mt := range cmd.ReadOnly {
		target := mt.Target
		if target == "" {
			target = mt.Source
		}
		a.bind("--ro-bind", mt.Source, target)
	}
	for _, p := range cmd.Scratch {
		a.mountTmpfs(p, b.cfg.TmpSize, "01777")
	}
	a.bind("--ro-bind", exe, helperPath)
	if m.egress != nil {
		a.bind("--bind", m.egress.socket, egressSocket)
	}
	dir := cmd.Dir
	if dir == "" {
		dir = m.ws
	}
	a.add("--chdir", dir, "--")
	if b.setpriv != "" {
		a.add(b.setpriv, fmt.Sprintf("--reuid=%d", b.cfg.UID), fmt.Sprintf("--regid=%d", b.cfg.GID),
			"--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--")
	}
	if m.egress != nil {
		relay := []string{}
		for _, f := range m.egress.forward {
			relay = append(relay, "--forward", f)
		}
		a.add(helperCommand("relay", append(relay, "--")...)...)
	}
	a.add(cmd.Args...)
	return a.args, nil
}

// hidePaths hides $HOME (an empty, writable tmpfs), the configured paths
// and the container's secrets from the command.
func (b *Box) hidePaths(a *bwrapArgs, hidden []string) {
	hide := func(p, perms string) {
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
			a.mountTmpfs(p, b.cfg.TmpSize, perms)
		default:
			a.add("--ro-bind", "/dev/null", p)
		}
	}
	hide(b.home, "01777")
	for _, p := range hidden {
		hide(p, "0755")
	}
	hide("/run/secrets", "0755")
}
