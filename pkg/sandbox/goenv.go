package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// goEnv is the Go toolchain's root, module cache and module proxy, when
// Go is installed.
func goEnv(ctx context.Context) (goroot, modcache, goproxy string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "go", "env", "GOROOT", "GOMODCACHE", "GOPROXY")
	c.Env = Env()
	out, err := c.Output()
	if err != nil {
		return "", "", ""
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 3 {
		return "", "", ""
	}
	return strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), strings.TrimSpace(f[2])
}

// env is the environment of a confined command: the scrubbed one, with
// the repository's caches, a private temporary directory, and no module
// downloads unless the network is allowed or the command is the setup
// that fills the module cache.
//
// The Go build cache is layered (see gocache.go): the repository's own and
// the seed are read, and what the command compiles goes to its scratch
// directory, unless the command is the setup that fills the repository's.
func (b *Box) env(m mounts, cmd Cmd) []string {
	own, build := filepath.Join(m.cache, "mod"), filepath.Join(m.cache, "go-build")
	fills := func(dir string) bool {
		for _, f := range m.fill {
			if f == dir {
				return true
			}
		}
		return false
	}
	// No VCS stamping: the checkout's git directory may be hidden (a work
	// tree of a mirror in the data directory), and builds must not fail on it.
	goflags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -buildvcs=false")
	env := []string{"TMPDIR=/tmp"}
	// The host's module cache, read as a module proxy.
	host := ""
	if b.modcache != "" {
		host = "file://" + filepath.ToSlash(filepath.Join(b.modcache, "cache", "download"))
	}
	_, ownErr := os.Stat(filepath.Join(own, "cache", "download"))
	switch {
	case m.hostNetwork:
		env = append(env, "GOMODCACHE="+own, "GOFLAGS="+goflags+" -modcacherw")
	case fills(own):
		env = append(env, "GOMODCACHE="+own, "GOFLAGS="+goflags+" -modcacherw")
		if host != "" && b.goproxy != "" && b.goproxy != "off" {
			env = append(env, "GOPROXY="+host+","+b.goproxy)
		}
	case ownErr == nil:
		env = append(env, "GOMODCACHE="+own, "GOFLAGS="+goflags, "GOPROXY=off")
	default:
		env = append(env, "GOFLAGS="+goflags)
		if b.modcache != "" {
			env = append(env, "GOMODCACHE="+b.modcache)
		}
		env = append(env, "GOPROXY=off")
	}
	switch {
	case m.goEnvOff:
		env = append(env, "GOCACHE="+filepath.Join(m.fill[0]))
	default:
		write := filepath.Join(m.scratch, "go-build")
		if fills(build) {
			write = build
		}
		read := []string{build}
		if b.seedDir() != "" {
			read = append(read, seedMount) // where wrap shows it
		}
		env = append(env,
			"GOCACHE="+filepath.Join(m.scratch, "go-cache"),
			"GOCACHEPROG="+strings.Join(helperCommand("gocache"), " "),
			goCacheReadEnv+"="+strings.Join(read, string(os.PathListSeparator)),
			goCacheWriteEnv+"="+write,
		)
	}
	return Env(append(env, cmd.Env...)...)
}
