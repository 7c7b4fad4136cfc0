package app

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/repourl"
)

// allowlist is the configured repository allowlist (validated by
// config.Load).
func allowlist(cfg config.Config) *repourl.Allowlist {
	a, err := repourl.NewAllowlist(cfg.HTTP.AllowRepos...)
	if err != nil {
		a, _ = repourl.NewAllowlist()
	}
	return a
}

// ErrOpenListener is returned when the bot would listen beyond loopback
// with no ingest token.
var ErrOpenListener = errors.New("refusing to listen beyond loopback without an ingest token")

// checkListen refuses an address reachable from other machines when no
// ingest token is set, unless the configuration says so explicitly.
func checkListen(cfg config.Config, addr net.Addr, log *zap.Logger) error {
	if cfg.HTTP.IngestToken != "" || loopback(addr) {
		return nil
	}
	if cfg.HTTP.PublicWithoutToken {
		log.Warn("listening beyond loopback with no ingest token: anyone who reaches this address can submit reports for the allowed repositories", zap.String("addr", addr.String()))
		return nil
	}
	return fmt.Errorf("%w (%s): set http.ingest_token (REDFIX_INGEST_TOKEN), listen on 127.0.0.1, or set http.public_without_token (REDFIX_PUBLIC_WITHOUT_TOKEN=true)", ErrOpenListener, addr)
}

// listen listens on addr for the bot's HTTP server and refuses, with
// checkListen's error, an address beyond loopback when no ingest token is
// set: `bot serve` and `bot demo --serve` listen through it.
func listen(cfg config.Config, addr string, log *zap.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if err := checkListen(cfg, ln.Addr(), log); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

func loopback(addr net.Addr) bool {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return false
	}
	return ap.Addr().IsLoopback()
}

// warnSecurity says at start what the API accepts.
func warnSecurity(cfg config.Config, log *zap.Logger) {
	a := allowlist(cfg)
	if a.Empty() {
		log.Warn("no repository is allowed on the ingest API: set http.allow_repos (REDFIX_ALLOW_REPOS); only verified webhooks will be triaged")
	} else {
		log.Info("ingest API allowlist", zap.Strings("allow_repos", a.Patterns()))
	}
	switch {
	case cfg.HTTP.ReadToken != "" || cfg.HTTP.TrustedUserHeader != "":
	case cfg.HTTP.ReadOpen:
		log.Warn("the dashboard, the task API and /metrics are open to anyone who reaches the bot (http.read_open): set http.read_token (REDFIX_READ_TOKEN) or http.trusted_user_header to close them")
	case cfg.HTTP.IngestToken != "":
		log.Warn("no read token: the dashboard, the task API and /metrics answer only the ingest token; set http.read_token (REDFIX_READ_TOKEN) for readers")
	default:
		log.Warn("no read token: the dashboard, the task API and /metrics refuse every reader; set http.read_token (REDFIX_READ_TOKEN), http.trusted_user_header, or http.read_open: true (REDFIX_READ_OPEN) to open them to anyone")
	}
}
