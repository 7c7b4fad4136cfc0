package app

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

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
