package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
)

func TestCheckListen(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	for _, c := range []struct {
		addr   string
		token  string
		public bool
		ok     bool
	}{
		{"127.0.0.1:8080", "", false, true},
		{"[::1]:8080", "", false, true},
		{"0.0.0.0:8080", "", false, false},
		{"[::]:8080", "", false, false},
		{"10.1.2.3:8080", "", false, false},
		{"0.0.0.0:8080", "t0ken", false, true},
		{"0.0.0.0:8080", "", true, true},
	} {
		cfg := config.Default()
		cfg.HTTP.IngestToken, cfg.HTTP.PublicWithoutToken = c.token, c.public
		err := checkListen(cfg, tcp(c.addr), zap.NewNop())
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrOpenListener)) {
			t.Errorf("%s token=%q public=%v: %v", c.addr, c.token, c.public, err)
		}
	}
}

// listen refuses what checkListen refuses, and leaves no listener behind.
func TestListen(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:0", "", true},
		{"0.0.0.0:0", "", false},
		{"0.0.0.0:0", "t0ken", true},
	} {
		cfg := config.Default()
		cfg.HTTP.IngestToken = c.token
		ln, err := listen(cfg, c.addr, zap.NewNop())
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrOpenListener)) {
			t.Errorf("listen %s token=%q: %v", c.addr, c.token, err)
		}
		if ln != nil {
			ln.Close()
		}
	}
}

// `bot demo --serve` on every interface with no ingest token is refused as
// `bot serve` refuses it, with the same error, before anything is built.
func TestDemoServeRefusesAnOpenAddress(t *testing.T) {
	clearEnv(t)
	t.Setenv("REDFIX_INGEST_TOKEN", "")
	t.Setenv("REDFIX_PUBLIC_WITHOUT_TOKEN", "")
	out := filepath.Join(t.TempDir(), "demo")
	var stdout, stderr bytes.Buffer
	err := Demo(context.Background(), []string{"--out", out, "--serve", "0.0.0.0:0"}, &stdout, &stderr)
	if !errors.Is(err, ErrOpenListener) {
		t.Fatalf("demo --serve 0.0.0.0:0 = %v, want %v\n%s", err, ErrOpenListener, stdout.String())
	}
	want := checkListen(config.Default(), &net.TCPAddr{IP: net.IPv4zero, Port: 1}, zap.NewNop()).Error()
	prefix, _, _ := strings.Cut(want, " (")
	_, hint, _ := strings.Cut(want, "): ")
	if !strings.HasPrefix(err.Error(), prefix+" (") || !strings.HasSuffix(err.Error(), "): "+hint) {
		t.Errorf("demo's error %q is not bot serve's %q", err, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the demo built %s before refusing: %v", out, err)
	}
}

// `bot serve` with no read token refuses to read its task API and
// metrics, saying which setting opens them, and says so when it starts;
// with the read token set, the token reads. /healthz stays open.
func TestServeReadsNeedAToken(t *testing.T) {
	clearEnv(t)
	for _, k := range []string{"REDFIX_READ_TOKEN", "REDFIX_READ_OPEN", "REDFIX_INGEST_TOKEN", "REDFIX_TRUSTED_USER_HEADER"} {
		t.Setenv(k, "")
	}
	t.Setenv("REDFIX_LOG_FORMAT", "json")
	t.Setenv("REDFIX_STARTUP_WAIT", "30s")
	read := func(base, path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, token := range []string{"", "serve-read-token"} {
		t.Setenv("REDFIX_READ_TOKEN", token)
		t.Setenv("REDFIX_DATA_DIR", t.TempDir())
		base := "http://127.0.0.1:" + strconv.Itoa(testsvc.FreePort(t))
		t.Setenv("REDFIX_HTTP_ADDR", strings.TrimPrefix(base, "http://"))
		ctx, cancel := context.WithCancel(context.Background())
		var stderr lockedBuffer
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, nil, io.Discard, &stderr) }()
		testsvc.PollSeeing(t, 2*time.Minute, "bot serve answers /healthz", stderr.String, func() bool {
			select {
			case err := <-done:
				t.Fatalf("bot serve ended: %v\n%s", err, stderr.String())
			default:
			}
			resp, err := http.Get(base + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		for _, path := range []string{"/api/v1/tasks", "/metrics"} {
			code, body := read(base, path, "")
			if code != http.StatusUnauthorized {
				t.Errorf("read token %q: GET %s without a token: %d %.200s, want 401", token, path, code, body)
			}
			if token == "" {
				if !strings.Contains(body, "http.read_token") || !strings.Contains(body, "REDFIX_READ_TOKEN") {
					t.Errorf("GET %s with no read token configured: %s, want the settings named", path, body)
				}
				continue
			}
			if code, body := read(base, path, token); code != http.StatusOK {
				t.Errorf("GET %s with the read token: %d %.200s", path, code, body)
			}
		}
		cancel()
		if err := testsvc.Receive(t, time.Minute, "bot serve stops", done); err != nil {
			t.Errorf("bot serve: %v", err)
		}
		if warned := strings.Contains(stderr.String(), "refuse every reader"); warned != (token == "") {
			t.Errorf("read token %q: start-up warning that reads are refused: %v\n%s", token, warned, stderr.String())
		}
	}
}
