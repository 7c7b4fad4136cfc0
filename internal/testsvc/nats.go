package testsvc

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATS is a real nats-server (Debian's package, the binary on PATH) with
// JetStream on a store directory of the test's own, on a loopback port. It
// keeps its store and port across Stop and Start.
type NATS struct {
	p       *process
	port    int
	version string
}

// StartNATS starts nats-server with JetStream and stops it when the test
// ends.
func StartNATS(t testing.TB) *NATS {
	t.Helper()
	path := Need(t, "nats-server", "nats-server")
	n := &NATS{port: FreePort(t)}
	n.p = &process{t: t, name: "nats-server", path: path,
		args:  []string{"-js", "-a", "127.0.0.1", "-p", strconv.Itoa(n.port), "-sd", t.TempDir()},
		ready: n.ready}
	n.p.start()
	t.Cleanup(n.p.stop)
	return n
}

// ready connects and asks JetStream for the account's information.
func (n *NATS) ready(ctx context.Context) error {
	if err := dial(ctx, loopback(n.port)); err != nil {
		return err
	}
	nc, err := nats.Connect(n.URL(), nats.Timeout(time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	n.version = nc.ConnectedServerVersion()
	return nil
}

// URL is the client URL.
func (n *NATS) URL() string { return "nats://" + loopback(n.port) }

// Version is the server's version as it announces it ("2.9.10").
func (n *NATS) Version() string { return n.version }

// Output is what the server logged so far.
func (n *NATS) Output() string { return n.p.output() }

// Connect is a client of it, closed when the test ends.
func (n *NATS) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(n.URL(), opts...)
	if err != nil {
		t.Fatalf("connect to nats-server %s: %v", n.URL(), err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// JetStream is a JetStream client of it, closed when the test ends.
func (n *NATS) JetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(n.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Stop kills it; its store stays.
func (n *NATS) Stop() { n.p.stop() }

// Start starts it again after Stop, on the same port and store.
func (n *NATS) Start() {
	n.p.t.Helper()
	n.p.start()
}
