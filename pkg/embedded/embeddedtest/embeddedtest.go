// Package embeddedtest starts the embedded servers for a test and stops them
// when it ends: a real NATS JetStream on a file store and a real
// Redis-protocol server, both in process.
package embeddedtest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/embedded"
)

// JetStream starts an in-process NATS server with JetStream on a file store
// in the test's temporary directory, and returns a JetStream client of it.
func JetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: t.TempDir(), DontListen: true})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := srv.Connect()
	if err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		nc.Close()
		srv.Shutdown()
	})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Redis starts an in-process Redis-protocol server and returns a client of
// it.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	srv, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	return rdb
}
