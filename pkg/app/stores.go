package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/stream"
)

// Start-up checks every store before anything is served or consumed: a
// process that cannot reach one, or is refused by it, exits naming the
// store's address and the cause, never a credential.

// storePoll is how often start-up asks a store again while it waits.
const storePoll = 250 * time.Millisecond

// connectNATS connects to the NATS server at rawURL and waits, at most
// wait, until it has: a refused login ends the wait at once. The client
// reconnects by itself after that (no limit), as opts say.
func connectNATS(ctx context.Context, rawURL string, wait time.Duration, opts []nats.Option) (*nats.Conn, error) {
	addr := redactURL(rawURL)
	// Why the last try failed: nats.go reports a server it could not
	// reach as "no servers available", without the dial's error.
	var mu sync.Mutex
	var last error
	var refused bool // a login refused: waiting will not cure it
	record := func(err error) {
		if err != nil && !errors.Is(err, nats.ErrNoServers) {
			mu.Lock()
			last = err
			refused = refused || loginRefused(err)
			mu.Unlock()
		}
	}
	failure := func() (error, bool) {
		mu.Lock()
		defer mu.Unlock()
		return last, refused
	}
	opts = append(opts,
		// The first connection is retried like any later one.
		nats.RetryOnFailedConnect(true),
		nats.SetCustomDialer(recordingDialer{d: &net.Dialer{Timeout: nats.DefaultTimeout}, record: record}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { record(err) }))
	nc, err := nats.Connect(rawURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("NATS at %s: %w", addr, err)
	}
	deadline := time.Now().Add(wait)
	for !nc.IsConnected() {
		if cause, refused := failure(); refused || nc.IsClosed() {
			nc.Close()
			if cause == nil {
				cause = nc.LastError()
			}
			if cause == nil {
				cause = errors.New("connection closed")
			}
			return nil, fmt.Errorf("NATS at %s: %w", addr, cause)
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			nc.Close()
			cause, _ := failure()
			if cause == nil {
				cause = nc.LastError()
			}
			if cause == nil {
				cause = errors.New("no answer")
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("NATS at %s: not connected: %w (%w)", addr, cause, ctx.Err())
			}
			return nil, fmt.Errorf("NATS at %s: not connected after %s (startup_wait): %w", addr, wait, cause)
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(storePoll, max(time.Until(deadline), time.Millisecond))):
		}
	}
	return nc, nil
}

// whileElecting opens streams with open, again while it fails, for at most
// wait: a NATS cluster that is starting, or has just lost a node, answers
// stream requests with timeouts or "temporarily unavailable" until it has
// elected the stream's leader (a replicated stream's creation waits for
// its replicas). A setting the server refuses ends the wait late, with
// the server's answer.
func whileElecting[T any](ctx context.Context, wait time.Duration, open func() (T, error)) (T, error) {
	deadline := time.Now().Add(wait)
	for {
		v, err := open()
		if err == nil || ctx.Err() != nil || !time.Now().Before(deadline) {
			return v, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(storePoll):
		}
	}
}

// loginRefused reports whether a NATS server refused the credentials.
func loginRefused(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, e := range []string{nats.AUTHORIZATION_ERR, nats.AUTHENTICATION_EXPIRED_ERR, nats.AUTHENTICATION_REVOKED_ERR, nats.ACCOUNT_AUTHENTICATION_EXPIRED_ERR} {
		if strings.Contains(msg, e) {
			return true
		}
	}
	return false
}

// recordingDialer dials as nats.go would, and records why a dial failed.
type recordingDialer struct {
	d      *net.Dialer
	record func(error)
}

func (r recordingDialer) Dial(network, address string) (net.Conn, error) {
	c, err := r.d.Dial(network, address)
	r.record(err)
	return c, err
}

// checkJetStream asks the connected server for its version (stream's
// minimum) and its JetStream account, which must answer. The account is
// asked again, each time waiting longer for the answer, until wait passes:
// a NATS cluster answers JetStream requests through its meta leader only,
// and drops them while it elects one (a node lost, a cluster starting, or
// a leader too loaded to keep its term), so one unanswered request is no
// verdict. A server without JetStream ends the wait at once.
func checkJetStream(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, addr string, wait time.Duration) error {
	if _, err := stream.CheckServer(nc); err != nil {
		return err
	}
	deadline := time.Now().Add(max(wait, 5*time.Second))
	try := jetStreamTry
	for {
		tctx, cancel := context.WithTimeout(ctx, min(try, max(time.Until(deadline), time.Millisecond)))
		_, err := js.AccountInfo(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || ctx.Err() != nil {
			return fmt.Errorf("NATS at %s (nats-server %s): JetStream: %w", addr, nc.ConnectedServerVersion(), err)
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("NATS at %s (nats-server %s): JetStream: no answer after %s (startup_wait): %w", addr, nc.ConnectedServerVersion(), wait, err)
		}
		try = min(2*try, maxJetStreamTry)
		select {
		case <-ctx.Done():
		case <-time.After(storePoll):
		}
	}
}

// jetStreamTry is how long start-up first waits for an answer to one
// JetStream request, doubled on each try up to maxJetStreamTry.
const (
	jetStreamTry    = time.Second
	maxJetStreamTry = 10 * time.Second
)

// checkRedis pings Redis at addr, with the client's credentials, until it
// answers or wait passes; an answer that is an error (a wrong password, no
// password given) ends the wait at once, except LOADING (a Redis reading
// its file back). password is removed from the error, should it appear.
func checkRedis(ctx context.Context, rdb redis.UniversalClient, addr, password string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		pctx, cancel := context.WithTimeout(ctx, max(time.Until(deadline), 3*time.Second))
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		var answered redis.Error
		final := errors.As(err, &answered) && !strings.HasPrefix(err.Error(), "LOADING")
		if final || !time.Now().Before(deadline) || ctx.Err() != nil {
			msg := err.Error()
			if password != "" {
				msg = strings.ReplaceAll(msg, password, "[password]")
			}
			if final {
				return fmt.Errorf("redis at %s: %s", addr, msg)
			}
			return fmt.Errorf("redis at %s: no answer after %s (startup_wait): %s", addr, wait, msg)
		}
		select {
		case <-ctx.Done():
		case <-time.After(storePoll):
		}
	}
}

// redactURL is a NATS URL (or a comma-separated list of them) without the
// credentials in it: user, password or token.
func redactURL(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		u, err := url.Parse(p)
		switch {
		case err != nil:
			if at := strings.LastIndex(p, "@"); at >= 0 {
				p = "[credentials]" + p[at:]
			}
		case u.User != nil:
			u.User = nil
			p = u.String()
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}
