package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// goEnv is the Go toolchain's root, module cache and module proxy, when Go
// is installed.
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
// the repository's own caches, a private temporary directory, and no
// module downloads unless the network is allowed or the command is a
// setup step (Cmd.Setup). A setup step fetches into the repository's own
// module cache, taking what the host's cache holds first; the commands
// after it read that cache, and the host's, offline.
func (b *Box) env(repo, cache string, extra []string, setup bool) []string {
	own := filepath.Join(cache, "mod")
	// No VCS stamping: the checkout's git directory may be hidden (a work
	// tree of a mirror in the data directory), and builds must not fail on it.
	goflags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -buildvcs=false")
	env := []string{"GOCACHE=" + filepath.Join(cache, "go-build"), "TMPDIR=/tmp"}
	// The host's module cache, read as a module proxy.
	host := ""
	if b.modcache != "" {
		host = "file://" + filepath.ToSlash(filepath.Join(b.modcache, "cache", "download"))
	}
	_, ownErr := os.Stat(filepath.Join(own, "cache", "download"))
	switch {
	case b.networkFor(repo):
		env = append(env, "GOMODCACHE="+own, "GOFLAGS="+goflags+" -modcacherw")
	case setup:
		env = append(env, "GOMODCACHE="+own, "GOFLAGS="+goflags+" -modcacherw")
		if host != "" && b.goproxy != "" && b.goproxy != "off" {
			env = append(env, "GOPROXY="+host+","+b.goproxy)
		}
	case ownErr == nil && host != "":
		env = append(env, "GOMODCACHE="+own, "GOFLAGS="+goflags+" -modcacherw", "GOPROXY="+host)
	default:
		env = append(env, "GOFLAGS="+goflags)
		if b.modcache != "" {
			env = append(env, "GOMODCACHE="+b.modcache)
		}
		env = append(env, "GOPROXY=off")
	}
	return Env(append(env, extra...)...)
}
