package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
)

// testSeed is the user's seed as it is before any test moves $HOME: every
// box of these tests starts its caches from it.
var testSeed = DefaultSeedCache()

// confined is a Box that must confine: under CI=true a host that cannot is
// a failure, elsewhere the test is skipped with the reason.
func confined(t *testing.T, cfg Config) *Box {
	t.Helper()
	cfg.Mode = ModeRequired
	if cfg.SeedCache == "" {
		cfg.SeedCache = testSeed
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = t.TempDir()
	}
	b, err := New(context.Background(), cfg)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	return b
}

// workspace is a directory that looks like a checkout.
func workspace(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

func sh(t *testing.T, ctx context.Context, b *Box, dir, script string) Result {
	t.Helper()
	res, err := b.Run(ctx, Cmd{Dir: dir, Args: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A command writes the tree named on its context, and without one only its
// own directory: no walk up the file system decides what it may write.
func TestConfinedWritableTreeComesFromTheContext(t *testing.T) {
	b := confined(t, Config{})
	top := t.TempDir()
	ws := filepath.Join(top, "repo")
	sub := filepath.Join(ws, "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A git directory next to the tree, as a checkout's is kept.
	if err := os.MkdirAll(filepath.Join(top, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`echo x > %[1]s/root-file; echo x > %[2]s/sub-file; echo x > %[3]s/git/config`, ws, sub, top)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	res := sh(t, context.Background(), b, sub, script)
	if exists(filepath.Join(ws, "root-file")) || !exists(filepath.Join(sub, "sub-file")) || exists(filepath.Join(top, "git", "config")) {
		t.Fatalf("without a tree on the context, only the command's directory is writable:\n%s", res.Output)
	}
	os.Remove(filepath.Join(sub, "sub-file"))
	res = sh(t, WithTree(context.Background(), ws), b, sub, script)
	if !exists(filepath.Join(ws, "root-file")) || !exists(filepath.Join(sub, "sub-file")) || exists(filepath.Join(top, "git", "config")) {
		t.Fatalf("with the tree on the context, the whole tree and nothing beside it is writable:\n%s", res.Output)
	}
}

// A .git file at the tree's root (a work tree whose git directory lives
// elsewhere) stays as it is: a command cannot point it at a git directory
// of its own making.
func TestConfinedCannotRewriteAGitFile(t *testing.T) {
	b := confined(t, Config{})
	ws := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	gitFile := filepath.Join(ws, ".git")
	if err := os.WriteFile(gitFile, []byte("gitdir: /somewhere/redfix/owns\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := sh(t, WithTree(context.Background(), ws), b, ws, `mkdir planted; echo "gitdir: planted" > .git && echo REWROTE; rm -f .git && echo REMOVED; mv .git moved && echo MOVED`)
	if strings.Contains(res.Output, "REWROTE") || strings.Contains(res.Output, "REMOVED") || strings.Contains(res.Output, "MOVED") {
		t.Fatalf("the .git file was changed:\n%s", res.Output)
	}
	if data, _ := os.ReadFile(gitFile); string(data) != "gitdir: /somewhere/redfix/owns\n" {
		t.Fatalf(".git = %q", data)
	}
}

func TestConfinedRunsInItsOwnPIDNamespace(t *testing.T) {
	b := confined(t, Config{})
	ws := workspace(t)
	me := strconv.Itoa(os.Getpid())
	res := sh(t, context.Background(), b, ws, "ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/"+me+"/environ && echo READ-PARENT")
	if strings.Contains(res.Output, "READ-PARENT") {
		t.Fatalf("the sandbox read the test process's environment:\n%s", res.Output)
	}
	n, err := strconv.Atoi(strings.Fields(res.Output)[0])
	if err != nil || n > 5 {
		t.Fatalf("the sandbox sees %q processes, want only its own few:\n%s", strings.Fields(res.Output)[0], res.Output)
	}
}

func TestConfinedHasNoNetworkUnlessAllowed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HELLO\n"))
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// bash's /dev/tcp needs no tool that may be missing.
	script := "exec 3<>/dev/tcp/127.0.0.1/" + port + " && head -n1 <&3"
	ctx := WithRepo(context.Background(), "https://git.example/org/closed.git")
	b := confined(t, Config{NetworkRepos: []string{"https://git.example/org/open*"}})
	ws := workspace(t)
	res, err := b.Run(ctx, Cmd{Dir: ws, Args: []string{"bash", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || strings.Contains(res.Output, "HELLO") {
		t.Fatalf("a repository without network reached 127.0.0.1:%s: %+v", port, res)
	}
	open := WithRepo(context.Background(), "https://git.example/org/open.git")
	res, err = b.Run(open, Cmd{Dir: ws, Args: []string{"bash", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || !strings.Contains(res.Output, "HELLO") {
		t.Fatalf("a repository allowed the network could not reach it: %+v", res)
	}
}

func TestConfinedWritesOnlyTheWorkspace(t *testing.T) {
	outside := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	secret := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(secret, []byte("s3cr3t-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := confined(t, Config{Hide: []string{secret}})
	ws := workspace(t)
	sub := filepath.Join(ws, "pkg")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`
echo in > %[1]s/written-from-sub
echo out > %[2]s/escaped 2>/dev/null && echo WROTE-OUTSIDE
echo home > "$HOME/escaped" && echo WROTE-HOME
echo tmp > /tmp/escaped && echo WROTE-TMP
echo hook > %[3]s/.git/hooks-escaped 2>/dev/null && echo WROTE-GIT
cat %[4]s
echo TMPDIR=$TMPDIR
`, ws, outside, ws, secret)
	res := sh(t, WithTree(context.Background(), ws), b, sub, script)
	if strings.Contains(res.Output, "WROTE-OUTSIDE") || strings.Contains(res.Output, "WROTE-GIT") {
		t.Fatalf("wrote outside the workspace:\n%s", res.Output)
	}
	if strings.Contains(res.Output, "s3cr3t-value") {
		t.Fatalf("read a hidden file:\n%s", res.Output)
	}
	for _, p := range []string{filepath.Join(outside, "escaped"), filepath.Join(home, "escaped"), filepath.Join(ws, ".git", "hooks-escaped")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists after the run", p)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "written-from-sub")); err != nil {
		t.Errorf("the workspace was not writable: %v\n%s", err, res.Output)
	}
	if !strings.Contains(res.Output, "WROTE-TMP") || !strings.Contains(res.Output, "TMPDIR=/tmp") {
		t.Errorf("no private temporary directory:\n%s", res.Output)
	}
}

func TestConfinedMemoryLimitKillsUnboundedAllocation(t *testing.T) {
	b := confined(t, Config{Memory: 256 << 20})
	ws := workspace(t)
	// tail keeps a line without end in memory: it grows until the limit.
	res := sh(t, context.Background(), b, ws, "head -c 2000000000 /dev/zero | tail -n 1 >/dev/null; echo tail=$?")
	if strings.Contains(res.Output, "tail=0") {
		t.Fatalf("2 GB was buffered under a 256 MiB limit:\n%s", res.Output)
	}
}

func TestConfinedCPULimit(t *testing.T) {
	b := confined(t, Config{CPUTime: time.Second})
	ws := workspace(t)
	res := sh(t, context.Background(), b, ws, "while :; do :; done")
	if res.TimedOut || res.ExitCode == 0 {
		t.Fatalf("a busy loop was not stopped by the CPU limit: %+v", res)
	}
}

// alive reports processes whose command line contains marker.
func alive(marker string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			found = append(found, e.Name())
		}
	}
	return found
}

func waitGone(t *testing.T, marker string) {
	t.Helper()
	var left []string
	// Whatever outlived its command is killed when the wait fails.
	defer func() {
		for _, p := range left {
			if n, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
	}()
	testsvc.PollSeeing(t, 30*time.Second, "no process of "+marker+" outlives its command",
		func() string { return fmt.Sprintf("processes %v (%s) outlived their command", left, marker) },
		func() bool {
			left = alive(marker)
			return len(left) == 0
		})
}

func TestConfinedChildrenDieWithTheCommand(t *testing.T) {
	b := confined(t, Config{})
	ws := workspace(t)
	marker := fmt.Sprintf("%d.%d", 300+os.Getpid()%100, time.Now().UnixNano()%1000000)
	// A child in a session of its own leaves the process group: only the
	// PID namespace takes it down.
	res := sh(t, context.Background(), b, ws, "setsid sleep "+marker+" >/dev/null 2>&1 < /dev/null & sleep 0.2; echo started")
	if !strings.Contains(res.Output, "started") {
		t.Fatalf("the command did not run: %+v", res)
	}
	waitGone(t, marker)
}

// TestHelperWorker is not a test: run as a child by
// TestConfinedCommandDiesWithKilledWorker, it plays a worker that runs a
// long command until it is killed.
func TestHelperWorker(t *testing.T) {
	marker := os.Getenv("REDFIX_SANDBOX_HELPER_MARKER")
	if marker == "" {
		t.Skip("helper process only")
	}
	b, err := New(context.Background(), Config{Mode: ModeRequired, CacheDir: os.Getenv("REDFIX_SANDBOX_HELPER_CACHE")})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = b.Run(context.Background(), Cmd{Dir: os.Getenv("REDFIX_SANDBOX_HELPER_WS"), Args: []string{"sh", "-c", "setsid sleep " + marker + " & sleep " + marker}})
}

func TestConfinedCommandDiesWithKilledWorker(t *testing.T) {
	confined(t, Config{})
	ws := workspace(t)
	marker := fmt.Sprintf("%d.%d", 400+os.Getpid()%100, time.Now().UnixNano()%1000000)
	c := exec.Command(os.Args[0], "-test.run=^TestHelperWorker$")
	c.Env = append(os.Environ(), "REDFIX_SANDBOX_HELPER_MARKER="+marker, "REDFIX_SANDBOX_HELPER_WS="+ws, "REDFIX_SANDBOX_HELPER_CACHE="+t.TempDir())
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Both bubblewraps, the shell and its two sleeps: the sandbox is set
	// up (a worker killed while bubblewrap is still starting is the one
	// window this does not cover).
	started := false
	defer func() {
		if !started {
			_ = c.Process.Kill()
		}
	}()
	testsvc.Poll(t, time.Minute, "the helper worker starts its command", func() bool { return len(alive("sleep "+marker)) >= 5 })
	started = true
	if err := c.Process.Kill(); err != nil { // kill -9 of the worker
		t.Fatal(err)
	}
	_ = c.Wait()
	waitGone(t, "sleep "+marker)
}

func TestRequiredRefusesAHostThatCannotConfine(t *testing.T) {
	_, err := New(context.Background(), Config{Mode: ModeRequired, Bwrap: "/nonexistent/bwrap"})
	if !errors.Is(err, ErrCannotConfine) {
		t.Fatalf("want ErrCannotConfine, got %v", err)
	}
}

func TestAutoFallsBackUnconfinedAndSaysWhy(t *testing.T) {
	b, err := New(context.Background(), Config{Bwrap: "/nonexistent/bwrap", CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	st := b.Status()
	if st.Confined || st.How != "none" || !strings.Contains(st.Reason, "not installed") {
		t.Fatalf("status %+v", st)
	}
	t.Setenv("OPENAI_API_KEY", "sk-fallback-secret")
	res, err := b.Run(context.Background(), Cmd{Dir: t.TempDir(), Args: []string{"env"}})
	if err != nil || !res.OK() {
		t.Fatalf("unconfined run: %v %+v", err, res)
	}
	if strings.Contains(res.Output, "sk-fallback-secret") {
		t.Fatal("a secret reached an unconfined command")
	}
}

func TestOffNeverConfines(t *testing.T) {
	b, err := New(context.Background(), Config{Mode: ModeOff})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status().Confined {
		t.Fatalf("mode off confined: %+v", b.Status())
	}
	if _, err := New(context.Background(), Config{Mode: "sometimes"}); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}

func TestRunUsesTheBoxOnTheContext(t *testing.T) {
	b := confined(t, Config{})
	ws := workspace(t)
	ctx := With(context.Background(), b)
	res, err := Run(ctx, Cmd{Dir: ws, Args: []string{"sh", "-c", "ls /proc | grep -cE '^[0-9]+$'"}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(res.Output)); n == 0 || n > 5 {
		t.Fatalf("Run did not confine through the context: %q", res.Output)
	}
	// Unconfined commands (redfix's own git) see the host.
	res, err = Run(ctx, Cmd{Dir: ws, Unconfined: true, Args: []string{"sh", "-c", "ls /proc | grep -cE '^[0-9]+$'"}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(res.Output)); n <= 5 {
		t.Fatalf("an unconfined command was confined: %q", res.Output)
	}
}

// canConfine skips the test on a host that cannot confine at all (and
// fails it under CI), so that what follows tests the configuration.
func canConfine(t *testing.T) {
	t.Helper()
	confined(t, Config{})
}

// Relative hidden paths and cache directory (`bot serve --config
// redfix.yaml`) are taken from the working directory: they confine, and
// stay hidden.
func TestRelativePathsConfine(t *testing.T) {
	canConfine(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("redfix.yaml", []byte("secret: rel-s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join("data", "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("data", "keys", "app.pem"), []byte("rel-pem-s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := New(context.Background(), Config{Mode: ModeRequired, CacheDir: "cache", Hide: []string{"redfix.yaml", "data", "not-yet"}})
	if err != nil {
		t.Fatalf("relative paths: %v", err)
	}
	if !b.Status().Confined {
		t.Fatalf("status %+v", b.Status())
	}
	if got := b.Config(); got.CacheDir != filepath.Join(dir, "cache") || got.Hide[0] != filepath.Join(dir, "redfix.yaml") {
		t.Fatalf("paths not made absolute: cache %q, hide %q", got.CacheDir, got.Hide)
	}
	ws := workspace(t)
	res := sh(t, WithTree(context.Background(), ws), b, ws, fmt.Sprintf("cat %[1]s/redfix.yaml %[1]s/data/keys/app.pem; echo done", dir))
	if !strings.Contains(res.Output, "done") || strings.Contains(res.Output, "s3cr3t") {
		t.Fatalf("a hidden file was read, or the command did not run:\n%s", res.Output)
	}
}

// A hidden path that bubblewrap cannot hide is a configuration error that
// names it, in every mode: not "this host cannot confine", and not an
// unconfined start.
func TestUnhideablePathIsNamed(t *testing.T) {
	canConfine(t)
	if os.Getpid() < 100 {
		t.Skip("the test's process ID could exist in the sandbox's own PID namespace")
	}
	// This process's entry in /proc exists here, and not in the sandbox's
	// /proc (its own PID namespace): bubblewrap cannot bind over it.
	bad := fmt.Sprintf("/proc/%d/environ", os.Getpid())
	fine := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(fine, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{ModeRequired, ModeAuto} {
		_, err := New(context.Background(), Config{Mode: mode, CacheDir: t.TempDir(), Hide: []string{fine, bad}})
		if err == nil {
			t.Fatalf("mode %s: a path bubblewrap cannot hide was accepted", mode)
		}
		if errors.Is(err, ErrCannotConfine) || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), fine) {
			t.Fatalf("mode %s: want an error naming %s (and not %s), got: %v", mode, bad, fine, err)
		}
	}
}

// A directory shown read-only stays unchanged, though it is shown inside
// the workspace; the repository's cache is read-only by its own path
// whatever the mounts. The same command without the mounts writes the
// workspace's node_modules, and still not the cache.
func TestConfinedReadOnlyMounts(t *testing.T) {
	cache := t.TempDir()
	b := confined(t, Config{CacheDir: cache})
	ctx := WithRepo(context.Background(), "o/r")
	shared := filepath.Join(b.cacheFor("o/r", false), "node", "modules")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := workspace(t)
	if err := os.MkdirAll(filepath.Join(ws, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`echo x > %[1]s/poisoned && echo WROTE-CACHE; echo x > node_modules/poisoned && echo WROTE-MOUNT; cat node_modules/seen`, shared)
	if err := os.WriteFile(filepath.Join(shared, "seen"), []byte("the cache's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(ro []Mount) Result {
		res, err := b.Run(WithTree(ctx, ws), Cmd{Dir: ws, Args: []string{"sh", "-c", script}, Timeout: time.Minute, ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run([]Mount{{Source: shared, Target: filepath.Join(ws, "node_modules")}})
	if strings.Contains(res.Output, "WROTE") || !strings.Contains(res.Output, "the cache's") {
		t.Fatalf("read-only mounts were written, or not shown:\n%s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(shared, "poisoned")); err == nil {
		t.Fatal("the shared directory was written")
	}
	res = run(nil)
	if strings.Contains(res.Output, "WROTE-CACHE") || !strings.Contains(res.Output, "WROTE-MOUNT") {
		t.Fatalf("without the mounts the workspace's node_modules is writable and the cache is not:\n%s", res.Output)
	}
}

// A scratch directory inside a read-only mount is writable to the command
// and empty to the next: what a run wrote there never reaches the shared
// directory, and what the shared directory holds there is not shown.
func TestConfinedScratchInsideAReadOnlyMount(t *testing.T) {
	b := confined(t, Config{CacheDir: t.TempDir()})
	ctx := WithRepo(context.Background(), "o/r")
	shared := filepath.Join(b.cacheFor("o/r", false), "node", "modules")
	if err := os.MkdirAll(filepath.Join(shared, ".vite-temp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, ".vite-temp", "planted"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := workspace(t)
	mod := filepath.Join(ws, "node_modules")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `ls node_modules/.vite-temp; echo x > node_modules/.vite-temp/bundled && echo WROTE-SCRATCH; echo x > node_modules/other && echo WROTE-MOUNT`
	for run := range 2 {
		res, err := b.Run(WithTree(ctx, ws), Cmd{
			Dir: ws, Args: []string{"sh", "-c", script}, Timeout: time.Minute,
			ReadOnly: []Mount{{Source: shared, Target: mod}}, Scratch: []string{filepath.Join(mod, ".vite-temp")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Output, "WROTE-SCRATCH") || strings.Contains(res.Output, "WROTE-MOUNT") || strings.Contains(res.Output, "planted") || strings.Contains(res.Output, "bundled\n") {
			t.Fatalf("run %d: want the scratch empty and writable, the rest read-only:\n%s", run, res.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(shared, ".vite-temp", "bundled")); err == nil {
		t.Fatal("what the run wrote in its scratch reached the shared directory")
	}
}
