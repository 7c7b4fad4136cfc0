package stream

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
)

// onServers runs fn against each nats-server redfix supports that this
// machine has: the in-process one (the module's version) and Debian's
// nats-server binary (2.9, the oldest supported).
func onServers(t *testing.T, fn func(t *testing.T, js jetstream.JetStream)) {
	t.Run("in-process", func(t *testing.T) { fn(t, embeddedtest.JetStream(t)) })
	t.Run("nats-server binary", func(t *testing.T) {
		n := testsvc.StartNATS(t)
		t.Logf("nats-server %s", n.Version())
		fn(t, n.JetStream(t))
	})
}

func openOn(t *testing.T, js jetstream.JetStream, cfg Config) *Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, js, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// onStream is how many messages the stream itself holds: a work-queue
// stream drops a message once it is acked or terminated, and one the
// server did not take as settled stays, to be delivered again.
func onStream(t *testing.T, s *Stream) uint64 {
	t.Helper()
	st, err := s.js.Stream(context.Background(), s.cfg.Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A parked message leaves its stream on every supported server: on 2.9 a
// termination with a reason is ignored, and the message came back after
// AckWait to be parked again, for good.
func TestParkTakesTheMessageOffItsStream(t *testing.T) {
	onServers(t, func(t *testing.T, js jetstream.JetStream) {
		s := openOn(t, js, testConfig())
		publish(t, s, "bad-report", "x")
		d := next(t, s)
		if err := d.Park(context.Background(), "triage failed for good"); err != nil {
			t.Fatal(err)
		}
		testsvc.Poll(t, 30*time.Second, "the parked message leaves its stream", func() bool { return onStream(t, s) == 0 })
		// The consumer's counts follow the stream asynchronously.
		testsvc.Poll(t, 30*time.Second, "the lag after parking is 0", func() bool {
			n, err := s.Lag(context.Background())
			return err == nil && n == 0
		})
		ps, err := s.Parked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].MsgID != "bad-report" || ps[0].Reason != "triage failed for good" {
			t.Fatalf("parked %+v", ps)
		}
	})
}

func TestTermTakesTheMessageOffItsStream(t *testing.T) {
	onServers(t, func(t *testing.T, js jetstream.JetStream) {
		s := openOn(t, js, testConfig())
		publish(t, s, "no-such-repo", "x")
		d := next(t, s)
		if err := d.Term(context.Background(), "repository not found"); err != nil {
			t.Fatal(err)
		}
		testsvc.Poll(t, 30*time.Second, "the terminated message leaves its stream", func() bool { return onStream(t, s) == 0 })
		if got := parkedCount(t, s); got != 0 {
			t.Fatalf("%d parked after a termination, want 0", got)
		}
	})
}

// fakeServer speaks just enough of the NATS protocol for a client to
// connect, announcing version.
func fakeServer(t *testing.T, version string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = c.Write([]byte(`INFO {"server_id":"FAKE","version":"` + version + `","proto":1,"headers":true,"max_payload":1048576}` + "\r\n"))
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if strings.HasPrefix(line, "PING") {
						_, _ = c.Write([]byte("PONG\r\n"))
					}
				}
			}()
		}
	}()
	return "nats://" + ln.Addr().String()
}

func TestOpenRefusesAServerTooOld(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"2.8.4", "is nats-server 2.8.4: redfix needs 2.9.0 or later"},
		{"1.4.1", "is nats-server 1.4.1: redfix needs 2.9.0 or later"},
		{"2.9.0", ""},
	} {
		nc, err := nats.Connect(fakeServer(t, tc.version))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = Open(ctx, js, testConfig(), zaptest.NewLogger(t))
		cancel()
		switch {
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("server %s: %v, want %q", tc.version, err, tc.want)
		case tc.want == "" && err != nil && strings.Contains(err.Error(), "redfix needs"):
			// The fake answers no JetStream request: a supported version
			// gets past the check and fails on the stream instead.
			t.Errorf("server %s refused: %v", tc.version, err)
		}
	}
}

func TestParseServerVersion(t *testing.T) {
	for in, want := range map[string]ServerVersion{
		"2.9.10": {2, 9, 10}, "v2.10.22": {2, 10, 22}, "2.11.0-beta.1": {2, 11, 0}, "2.15.2+build": {2, 15, 2},
	} {
		got, err := ParseServerVersion(in)
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2.9", "two.nine.ten", "2.-1.0"} {
		if _, err := ParseServerVersion(in); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
	if !(ServerVersion{2, 9, 10}).Less(ServerVersion{2, 10, 0}) || (ServerVersion{2, 10, 0}).Less(ServerVersion{2, 9, 10}) {
		t.Error("Less orders 2.9.10 and 2.10.0 wrong")
	}
}

// Bind uses what the server holds and creates nothing: on a server without
// the stream it says so, and the server still has no stream.
func TestBindCreatesNothing(t *testing.T) {
	js := embeddedtest.JetStream(t)
	ctx := context.Background()
	if _, err := Bind(ctx, js, testConfig(), nil); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "stream T") {
		t.Fatalf("bind on an empty server: %v, want ErrNotFound naming stream T", err)
	}
	names := js.StreamNames(ctx)
	for n := range names.Name() {
		t.Errorf("bind created stream %s", n)
	}
	s := openOn(t, js, testConfig())
	publish(t, s, "m", "x")
	if err := next(t, s).Park(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	b, err := Bind(ctx, js, testConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ps, err := b.Parked(ctx); err != nil || len(ps) != 1 || ps[0].MsgID != "m" {
		t.Fatalf("parked through Bind: %+v, %v", ps, err)
	}
}
