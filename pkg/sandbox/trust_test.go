package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A root redfix's commands run as a user that owns nothing: a root-only
// file is not theirs to read. The same command in a user namespace mapped
// to root (the sandbox before it dropped its user) reads it.
func TestConfinedRunsAsAUserThatOwnsNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("an unprivileged redfix's commands run as its own user")
	}
	// Outside /tmp, which the sandbox replaces with its own.
	dir, err := os.MkdirTemp("/var/tmp", "redfix-owner-")
	if err != nil {
		t.Skip("no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	private := filepath.Join(dir, "root-only")
	if err := os.WriteFile(private, []byte("ROOT-ONLY-CONTENT\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("id -u; cat %s /etc/shadow 2>&1 | head -c 200; echo done", private)
	b := confined(t, Config{})
	ws := workspace(t)
	res := sh(t, WithTree(context.Background(), ws), b, ws, script)
	if strings.Contains(res.Output, "ROOT-ONLY-CONTENT") || strings.Contains(res.Output, "root:") {
		t.Fatalf("a confined command read a root-only file:\n%s", res.Output)
	}
	if !strings.HasPrefix(res.Output, fmt.Sprint(DefaultUID)) || !strings.Contains(res.Output, "done") {
		t.Fatalf("the command did not run as uid %d:\n%s", DefaultUID, res.Output)
	}
	if st := b.Status(); !strings.Contains(st.String(), fmt.Sprintf("uid %d", DefaultUID)) {
		t.Errorf("the status does not say which user: %s", st)
	}

	asRoot := confined(t, Config{})
	asRoot.setpriv = ""
	res = sh(t, WithTree(context.Background(), ws), asRoot, ws, script)
	if !strings.Contains(res.Output, "ROOT-ONLY-CONTENT") {
		t.Fatalf("mapped to root, the command should read the file (the test shows nothing otherwise):\n%s", res.Output)
	}
}

// registryProbe is a Python script that tries every way out of a setup's
// sandbox: through the proxy its environment names and straight to the
// address, for the registry and for another listener of the host's.
const registryProbe = `
import os, socket, sys, urllib.request
reg, victim = sys.argv[1], sys.argv[2]
def proxied(hostport):
    try:
        return urllib.request.urlopen("http://%s/" % hostport, timeout=10).read().decode().strip()
    except Exception as e:
        return "ERR %s" % e
def direct(hostport):
    host, port = hostport.rsplit(":", 1)
    try:
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace").split("\r\n\r\n", 1)[-1].strip() or "EMPTY"
    except Exception as e:
        return "ERR %s" % e
def connect(hostport):
    proxy = os.environ.get("HTTP_PROXY", "")
    if not proxy:
        return "ERR no proxy"
    host, port = proxy.rsplit("/", 1)[-1].rsplit(":", 1)
    try:
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (hostport, hostport)).encode())
        return s.recv(200).decode(errors="replace").splitlines()[0]
    except Exception as e:
        return "ERR %s" % e
print("registry-proxied:", proxied(reg))
print("registry-direct:", direct(reg))
print("victim-proxied:", proxied(victim))
print("victim-direct:", direct(victim))
print("victim-connect:", connect(victim))
`

// A setup reaches the registries it names, through the proxy and at their
// own loopback address, and nothing else: another listener on the host's
// loopback never sees a connection. A command that is not a setup reaches
// neither. With the host's network (sandbox.network) the same probe
// reaches the listener: the check can fail.
func TestSetupReachesOnlyItsRegistries(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "REGISTRY-OK")
	}))
	defer registry.Close()
	var reached atomic.Int32
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		fmt.Fprintln(w, "VICTIM-REACHED")
	}))
	defer victim.Close()
	reg := strings.TrimPrefix(registry.URL, "http://")
	probe := func(b *Box, setup bool) string {
		t.Helper()
		ws := workspace(t)
		ctx := WithTree(WithRepo(context.Background(), "acme/setup"), ws)
		res, err := b.Run(ctx, Cmd{Dir: ws, Args: []string{python, "-c", registryProbe, reg, strings.TrimPrefix(victim.URL, "http://")},
			Setup: setup, Registries: []string{registry.URL + "/simple"}, Timeout: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return res.Output
	}
	out := probe(confined(t, Config{}), true)
	for _, want := range []string{"registry-proxied: REGISTRY-OK", "registry-direct: REGISTRY-OK", "victim-connect: HTTP/1.1 403", "not a configured package registry"} {
		if !strings.Contains(out, want) {
			t.Errorf("the setup's probe lacks %q:\n%s", want, out)
		}
	}
	if n := reached.Load(); n != 0 || strings.Contains(out, "VICTIM-REACHED") {
		t.Fatalf("a setup reached another listener of the host's loopback (%d connections):\n%s", n, out)
	}
	out = probe(confined(t, Config{}), false)
	if strings.Contains(out, "REGISTRY-OK") || strings.Contains(out, "VICTIM-REACHED") {
		t.Fatalf("a command that is no setup reached the network:\n%s", out)
	}
	out = probe(confined(t, Config{Network: true}), true)
	if !strings.Contains(out, "VICTIM-REACHED") || reached.Load() == 0 {
		t.Fatalf("with the host's network the probe should reach the listener (the test shows nothing otherwise):\n%s", out)
	}
}

// A cache directory is written by the setup that fills it and by no other
// command: not a test run (by the directory's own path), not another
// setup. What a root redfix's setup filled is given back to redfix's user.
func TestCachesAreWrittenOnlyByTheSetupThatFillsThem(t *testing.T) {
	b := confined(t, Config{})
	ws := workspace(t)
	ctx := WithTree(With(WithRepo(context.Background(), "acme/caches"), b), ws)
	fill := filepath.Join(CacheDir(ctx), "thing")
	other := filepath.Join(CacheDir(ctx), "other")
	write := func(name string, setup bool, fills ...string) Result {
		t.Helper()
		script := fmt.Sprintf(`echo x > %s && echo WROTE; echo x > %s/by-path 2>/dev/null && echo WROTE-CACHE; true`, filepath.Join(fill, name), CacheDir(ctx))
		res, err := b.Run(ctx, Cmd{Dir: ws, Args: []string{"sh", "-c", script}, Setup: setup, Fill: fills, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := write("by-setup", true, fill); !strings.Contains(res.Output, "WROTE") || strings.Contains(res.Output, "WROTE-CACHE") {
		t.Fatalf("the setup could not fill its directory, or wrote the cache beside it:\n%s", res.Output)
	}
	if res := write("by-test", false); strings.Contains(res.Output, "WROTE") {
		t.Fatalf("a test run wrote the cache:\n%s", res.Output)
	}
	if res := write("by-another-setup", true, other); strings.Contains(res.Output, "WROTE") {
		t.Fatalf("a setup wrote a directory it does not fill:\n%s", res.Output)
	}
	fi, err := os.Lstat(filepath.Join(fill, "by-setup"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
		t.Errorf("what the setup filled belongs to uid %d, not redfix's %d", st.Uid, os.Geteuid())
	}
	if _, err := b.Run(ctx, Cmd{Dir: ws, Args: []string{"true"}, Fill: []string{fill}}); err == nil {
		t.Error("a command that is no setup was let fill a cache")
	}
}

// A run of an untrusted source has caches of its own: what its setup
// fills is not in the trusted runs' cache.
func TestUntrustedRunsHaveCachesOfTheirOwn(t *testing.T) {
	b := confined(t, Config{})
	ctx := With(WithRepo(context.Background(), "acme/forked"), b)
	fork := WithUntrusted(ctx)
	if CacheDir(ctx) == CacheDir(fork) || !strings.HasPrefix(CacheDir(fork), b.Config().CacheDir) {
		t.Fatalf("trusted %s and untrusted %s caches", CacheDir(ctx), CacheDir(fork))
	}
	ws := workspace(t)
	fill := filepath.Join(CacheDir(fork), "venv")
	res, err := b.Run(WithTree(fork, ws), Cmd{Dir: ws, Args: []string{"sh", "-c", "echo planted > " + fill + "/x"}, Setup: true, Fill: []string{fill}})
	if err != nil || !res.OK() {
		t.Fatalf("the fork's setup: %v %+v", err, res)
	}
	res, err = b.Run(WithTree(ctx, ws), Cmd{Dir: ws, Args: []string{"sh", "-c", "cat " + filepath.Join(CacheDir(ctx), "venv", "x") + " 2>&1; true"}})
	if err != nil || strings.Contains(res.Output, "planted") {
		t.Fatalf("a trusted run read what a fork's setup filled: %v\n%s", err, res.Output)
	}
}

// Two setups that fill one directory at once (two lockfiles' installs
// sharing a download cache) both write it: the one that ends first gives
// the directory back to redfix only once the other is not writing it.
func TestSetupsFillingOneDirectoryBothWriteIt(t *testing.T) {
	b := confined(t, Config{})
	ctx := With(WithRepo(context.Background(), "acme/shared-fill"), b)
	shared := filepath.Join(CacheDir(ctx), "downloads")
	results := make(chan string, 2)
	for _, name := range []string{"first", "second"} {
		go func() {
			ws := workspace(t)
			script := fmt.Sprintf(`for i in 1 2 3 4 5 6 7 8 9 10; do echo x > %s/%s-$i || { echo FAILED; exit 1; }; sleep 0.05; done; echo DONE`, shared, name)
			res, err := b.Run(WithTree(ctx, ws), Cmd{Dir: ws, Args: []string{"sh", "-c", script}, Setup: true, Fill: []string{shared}, Timeout: time.Minute})
			if err != nil {
				results <- err.Error()
				return
			}
			results <- res.Output
		}()
	}
	for range 2 {
		if out := <-results; !strings.Contains(out, "DONE") {
			t.Errorf("a setup could not fill the directory it shares:\n%s", out)
		}
	}
}
