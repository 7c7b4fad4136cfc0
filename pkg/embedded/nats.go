// Package embedded runs the servers that `bot demo` needs inside the bot's own
// process: a NATS server with JetStream on disk, and a server speaking the
// Redis protocol in memory. Production points the same code at a NATS cluster
// and a real Redis instead.
//
// Each server requires a secret that its Start makes from crypto/rand (or
// that the caller names): whatever else runs on the machine, a repository's
// code included, reaches neither without it. The process that started a
// server hands the secret to its own clients (Connect does); it is never
// written anywhere.
package embedded

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
)

// Defaults for the JetStream limits. The server would otherwise size them
// from the host's memory and disk, which differs from machine to machine.
const (
	DefaultMaxMemory    int64 = 64 << 20 // 64 MiB
	DefaultMaxStore     int64 = 1 << 30  // 1 GiB
	DefaultReadyTimeout       = 30 * time.Second
)

// Options configure an embedded NATS server.
type Options struct {
	// StoreDir is where JetStream keeps its file store. Required: restarting
	// on the same directory keeps streams, messages, consumers and dedup state.
	StoreDir string
	// Port is the loopback TCP port clients connect to. 0 or -1 picks a free
	// port; URL reports it.
	Port int
	// DontListen opens no TCP port at all; clients connect with Connect only.
	DontListen bool
	// MaxMemory and MaxStore bound JetStream's memory and file storage.
	// Zero means DefaultMaxMemory and DefaultMaxStore.
	MaxMemory int64
	MaxStore  int64
	// ReadyTimeout bounds the wait for the server to accept clients
	// (recovering a large store takes a while). Zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Log receives the server's log. Nil discards it.
	Log *zap.Logger
	// Token is the secret every client must present (nats.Token), on TCP
	// and in process alike. Empty: a random one, made at start (what
	// redfix's own wiring always uses); a caller names one only to keep it
	// across a restart of the server (a test that restarts it under
	// clients that are already running).
	Token string
}

// NATS is a running in-process NATS server with JetStream.
type NATS struct {
	srv        *server.Server
	dontListen bool
	token      string
}

// secret is a random secret of 128 bits, as text.
func secret() string { return rand.Text() }

// StartNATS starts a NATS server with JetStream in this process and waits
// until it accepts clients, ctx is done, or ReadyTimeout passes.
func StartNATS(ctx context.Context, o Options) (*NATS, error) {
	if o.StoreDir == "" {
		return nil, errors.New("start embedded nats: no store directory")
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxStore == 0 {
		o.MaxStore = DefaultMaxStore
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.Token == "" {
		o.Token = secret()
	}
	port := o.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	sopts := &server.Options{
		ServerName:         "redfix-embedded",
		Host:               "127.0.0.1",
		Port:               port,
		DontListen:         o.DontListen,
		NoSigs:             true, // the bot owns the process's signals
		NoLog:              o.Log == nil,
		JetStream:          true,
		StoreDir:           o.StoreDir,
		JetStreamMaxMemory: o.MaxMemory,
		JetStreamMaxStore:  o.MaxStore,
		Authorization:      o.Token,
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("start embedded nats in %s: %w", o.StoreDir, err)
	}
	if o.Log != nil {
		srv.SetLoggerV2(serverLogger{o.Log.Named("nats-server").Sugar()}, false, false, false)
	}
	srv.Start()

	deadline := time.Now().Add(o.ReadyTimeout)
	for !srv.ReadyForConnections(100 * time.Millisecond) {
		if err := ctx.Err(); err != nil {
			stop(srv)
			return nil, fmt.Errorf("start embedded nats in %s: %w", o.StoreDir, err)
		}
		if time.Now().After(deadline) {
			stop(srv)
			return nil, fmt.Errorf("start embedded nats in %s: not ready after %s", o.StoreDir, o.ReadyTimeout)
		}
	}
	if !srv.JetStreamEnabled() {
		stop(srv)
		return nil, fmt.Errorf("start embedded nats in %s: jetstream did not start", o.StoreDir)
	}
	return &NATS{srv: srv, dontListen: o.DontListen, token: o.Token}, nil
}

// Token is the secret clients present (nats.Token): for a client this
// process makes itself, or one it starts and hands the secret to.
func (n *NATS) Token() string { return n.token }

// URL is the address TCP clients connect to, or "" when the server does not
// listen.
func (n *NATS) URL() string {
	if n.dontListen {
		return ""
	}
	return n.srv.ClientURL()
}

// Connect opens an in-process client connection (no TCP), with the
// server's token, which works whether or not the server listens. opts are
// applied after redfix's own.
func (n *NATS) Connect(opts ...nats.Option) (*nats.Conn, error) {
	all := append([]nats.Option{nats.InProcessServer(n.srv), nats.Name("redfix-embedded"), nats.Token(n.token)}, opts...)
	nc, err := nats.Connect("", all...)
	if err != nil {
		return nil, fmt.Errorf("connect to embedded nats: %w", err)
	}
	return nc, nil
}

// Shutdown stops the server and waits until it has flushed its store and
// closed. Calling it again does nothing.
func (n *NATS) Shutdown() { stop(n.srv) }

func stop(srv *server.Server) {
	srv.Shutdown()
	srv.WaitForShutdown()
}

// serverLogger passes nats-server's log to zap. Fatalf does not exit: the
// server decides what a fatal condition means for itself, and the bot
// decides what it means for the process.
type serverLogger struct{ s *zap.SugaredLogger }

func (l serverLogger) Noticef(format string, v ...any) { l.s.Infof(format, v...) }
func (l serverLogger) Warnf(format string, v ...any)   { l.s.Warnf(format, v...) }
func (l serverLogger) Fatalf(format string, v ...any)  { l.s.Errorf(format, v...) }
func (l serverLogger) Errorf(format string, v ...any)  { l.s.Errorf(format, v...) }
func (l serverLogger) Debugf(format string, v ...any)  { l.s.Debugf(format, v...) }
func (l serverLogger) Tracef(format string, v ...any)  { l.s.Debugf(format, v...) }
