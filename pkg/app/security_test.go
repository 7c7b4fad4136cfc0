package app

import (
	"errors"
	"net"
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
