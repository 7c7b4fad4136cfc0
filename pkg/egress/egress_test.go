package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseAllow(t *testing.T) {
	a, err := ParseAllow("https://Registry.Example/simple", "http://127.0.0.1:8080/x", "mirror.example:8443", "file:///srv/wheels", "off", "direct", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1:8080", "mirror.example:8443", "registry.example:443"}
	if got := a.Endpoints(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("endpoints %v, want %v", got, want)
	}
	for ep, ok := range map[string]bool{"REGISTRY.example:443": true, "registry.example:80": false, "127.0.0.1:8080": true, "127.0.0.1:6379": false, "169.254.169.254:80": false, "bad": false} {
		if a.Allows(ep) != ok {
			t.Errorf("Allows(%q) = %v", ep, !ok)
		}
	}
	if lo := a.Loopback(); len(lo) != 1 || lo[0] != "127.0.0.1:8080" {
		t.Errorf("loopback endpoints %v", lo)
	}
	for _, bad := range []string{"ftp://x", "https://", "nohostport"} {
		if _, err := ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q) accepted", bad)
		}
	}
}

// testProxy serves a proxy allowing allow on a Unix socket; it returns the
// socket's path.
func testProxy(t *testing.T, allow ...string) (string, *Proxy) {
	t.Helper()
	a, err := ParseAllow(allow...)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "egress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); ln.Close(); <-done })
	return sock, p
}

// counting is a TCP listener that counts the connections it accepts and
// answers each with an HTTP response naming it.
func counting(t *testing.T, name string) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprint(w, name)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), &n
}

// exchange sends a preamble and a request through the socket and returns
// the answer.
func exchange(t *testing.T, sock, preamble, request string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, preamble+"\n"+request); err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(c)
	return string(data)
}

// The proxy forwards GETs and tunnels CONNECTs to allowed endpoints, and
// refuses every other endpoint without connecting to it.
func TestProxyReachesOnlyAllowedEndpoints(t *testing.T) {
	registry, regHits := counting(t, "REGISTRY")
	victim, victimHits := counting(t, "VICTIM")
	sock, p := testProxy(t, "http://"+registry)

	get := func(hostport string) string {
		return exchange(t, sock, preambleProxy, "GET http://"+hostport+"/simple/ HTTP/1.1\r\nHost: "+hostport+"\r\nConnection: close\r\n\r\n")
	}
	if out := get(registry); !strings.Contains(out, "200 OK") || !strings.Contains(out, "REGISTRY") {
		t.Errorf("GET of the registry: %q", out)
	}
	if out := get(victim); !strings.Contains(out, "403") || strings.Contains(out, "VICTIM") {
		t.Errorf("GET of another endpoint: %q", out)
	}
	connect := func(hostport string) string {
		return exchange(t, sock, preambleProxy, "CONNECT "+hostport+" HTTP/1.1\r\nHost: "+hostport+"\r\n\r\nGET / HTTP/1.0\r\n\r\n")
	}
	if out := connect(registry); !strings.HasPrefix(out, "HTTP/1.1 200 Connection established") || !strings.Contains(out, "REGISTRY") {
		t.Errorf("CONNECT to the registry: %q", out)
	}
	if out := connect(victim); !strings.Contains(out, "403") || strings.Contains(out, "VICTIM") {
		t.Errorf("CONNECT to another endpoint: %q", out)
	}
	forward := func(hostport string) string {
		return exchange(t, sock, preambleForward+hostport, "GET / HTTP/1.0\r\n\r\n")
	}
	if out := forward(registry); !strings.Contains(out, "REGISTRY") {
		t.Errorf("forward to the registry: %q", out)
	}
	if out := forward(victim); out != "" {
		t.Errorf("forward to another endpoint: %q", out)
	}
	if out := exchange(t, sock, "something else", "GET / HTTP/1.0\r\n\r\n"); out != "" {
		t.Errorf("an unknown preamble was served: %q", out)
	}
	if n := victimHits.Load(); n != 0 {
		t.Fatalf("the proxy connected to a refused endpoint %d times", n)
	}
	if regHits.Load() != 3 {
		t.Errorf("the registry was reached %d times, want 3", regHits.Load())
	}
	if r := p.Refused(); len(r) != 1 || r[0] != victim {
		t.Errorf("refused %v, want [%s]", r, victim)
	}
}

// A request's headers are bounded: a client that never ends them is cut
// off rather than buffered.
func TestProxyBoundsHeaders(t *testing.T) {
	registry, _ := counting(t, "REGISTRY")
	sock, _ := testProxy(t, "http://"+registry)
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		w := bufio.NewWriter(c)
		fmt.Fprintf(w, "%s\nGET http://%s/ HTTP/1.1\r\nHost: x\r\n", preambleProxy, registry)
		line := "X-Big: " + strings.Repeat("a", 4096) + "\r\n"
		for range (maxHeaderBytes / len(line)) + 64 {
			if _, err := w.WriteString(line); err != nil {
				return
			}
		}
		_ = w.Flush()
	}()
	data, _ := io.ReadAll(c)
	if strings.Contains(string(data), "REGISTRY") {
		t.Fatalf("a request with %d bytes of headers was forwarded", maxHeaderBytes)
	}
}

// The relay gives its command a proxy that reaches the proxy outside.
func TestRelayGivesTheCommandAProxy(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	registry, _ := counting(t, "REGISTRY")
	victim, victimHits := counting(t, "VICTIM")
	sock, _ := testProxy(t, "http://"+registry)
	out := filepath.Join(t.TempDir(), "out")
	script := `
import sys, urllib.request
with open(sys.argv[3], "w") as f:
    for hp in sys.argv[1:3]:
        try:
            f.write(urllib.request.urlopen("http://%s/" % hp, timeout=10).read().decode() + "\n")
        except Exception as e:
            f.write("ERR %s\n" % e)
`
	code, err := Relay(context.Background(), RelayConfig{Socket: sock, Args: []string{python, "-c", script, registry, victim, out}})
	if err != nil || code != 0 {
		t.Fatalf("relay: %d %v", code, err)
	}
	data, _ := os.ReadFile(out)
	if !strings.Contains(string(data), "REGISTRY") || strings.Contains(string(data), "VICTIM") || victimHits.Load() != 0 {
		t.Fatalf("through the relay:\n%s", data)
	}
	code, err = Relay(context.Background(), RelayConfig{Socket: sock, Args: []string{"sh", "-c", "exit 3"}})
	if err != nil || code != 3 {
		t.Fatalf("the command's status: %d %v", code, err)
	}
}
