package testsvc

import (
	"context"
	"fmt"
	"strconv"
	"testing"
)

// GitDaemon is git's own server, `git daemon`, exporting every repository
// under a base directory over git:// on a loopback port of the test's own.
type GitDaemon struct {
	p    *process
	port int
}

// StartGitDaemon starts git daemon on base, waits until it accepts
// connections, and stops it when the test ends. A repository at base/NAME
// (a bare one, or a work tree with its .git) is git://127.0.0.1:PORT/NAME.
func StartGitDaemon(t testing.TB, base string) *GitDaemon {
	t.Helper()
	return startGitDaemon(t, base)
}

// StartPushableGitDaemon is StartGitDaemon taking pushes too (git
// daemon's receive-pack service, which asks no credentials), as a plain
// git remote does.
func StartPushableGitDaemon(t testing.TB, base string) *GitDaemon {
	t.Helper()
	return startGitDaemon(t, base, "--enable=receive-pack")
}

func startGitDaemon(t testing.TB, base string, extra ...string) *GitDaemon {
	t.Helper()
	path := Need(t, "git", "git")
	d := &GitDaemon{port: FreePort(t)}
	args := append([]string{"daemon", "--export-all", "--base-path=" + base, "--port=" + strconv.Itoa(d.port), "--listen=127.0.0.1", "--reuseaddr"}, extra...)
	d.p = &process{t: t, name: "git daemon", path: path,
		args:  append(args, base),
		ready: func(ctx context.Context) error { return dial(ctx, loopback(d.port)) }}
	d.p.start()
	t.Cleanup(d.p.stop)
	return d
}

// URL is where the daemon serves the repository base/name.
func (d *GitDaemon) URL(name string) string {
	return fmt.Sprintf("git://%s/%s", loopback(d.port), name)
}

// Output is what the daemon logged so far.
func (d *GitDaemon) Output() string { return d.p.output() }
