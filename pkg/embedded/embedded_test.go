package embedded

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
)

func startNATS(t *testing.T, o Options) *NATS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := StartNATS(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNATSRestartKeepsMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	log := zaptest.NewLogger(t)

	n := startNATS(t, Options{StoreDir: dir, Port: -1, Log: log})
	if n.URL() == "" {
		t.Fatal("a listening server has no URL")
	}
	// A TCP client at URL, with the token, reaches the same server as an
	// in-process one.
	nc, err := nats.Connect(n.URL(), nats.Token(n.Token()))
	if err != nil {
		t.Fatalf("connect over tcp to %s: %v", n.URL(), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "KEEP", Subjects: []string{"keep.>"}, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	for _, body := range []string{"one", "two"} {
		if _, err := js.Publish(ctx, "keep.x", []byte(body), jetstream.WithMsgID(body)); err != nil {
			t.Fatalf("publish %s: %v", body, err)
		}
	}
	nc.Close()
	n.Shutdown()
	n.Shutdown() // a second call is harmless

	n = startNATS(t, Options{StoreDir: dir, DontListen: true, Log: log})
	defer n.Shutdown()
	if u := n.URL(); u != "" {
		t.Fatalf("a server that does not listen has URL %q", u)
	}
	nc, err = n.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err = jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, "KEEP")
	if err != nil {
		t.Fatalf("stream after restart: %v", err)
	}
	for seq, want := range map[uint64]string{1: "one", 2: "two"} {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("message %d after restart: %v", seq, err)
		}
		if string(m.Data) != want {
			t.Errorf("message %d = %q, want %q", seq, m.Data, want)
		}
	}
	// Dedup state survived too: the same message id is a duplicate.
	ack, err := js.Publish(ctx, "keep.x", []byte("one"), jetstream.WithMsgID("one"))
	if err != nil {
		t.Fatal(err)
	}
	if !ack.Duplicate {
		t.Error("message id seen before the restart was not reported as a duplicate")
	}
}

func TestNATSNeedsStoreDir(t *testing.T) {
	if _, err := StartNATS(context.Background(), Options{}); err == nil {
		t.Fatal("started without a store directory")
	}
}

func TestRedisTTLExpiresInRealTime(t *testing.T) {
	ctx := context.Background()
	r, err := StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rdb := r.Client()
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "v", 200*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := rdb.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("get k = %q, %v", v, err)
	}
	testsvc.Poll(t, 30*time.Second, "the key with a 200ms TTL expires", func() bool {
		n, err := rdb.Exists(ctx, "k").Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}

// Each embedded server refuses a client without its secret, over the
// network as a repository's code would try it, and redfix's own clients
// (Connect, Client) work. The secret is new on each start.
func TestEmbeddedServersRefuseClientsWithoutTheSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := startNATS(t, Options{StoreDir: t.TempDir(), Port: -1})
	defer n.Shutdown()
	for name, opts := range map[string][]nats.Option{
		"no token":    nil,
		"wrong token": {nats.Token("guess")},
		"a user":      {nats.UserInfo("redfix", "")},
	} {
		nc, err := nats.Connect(n.URL(), append(opts, nats.Timeout(5*time.Second))...)
		if err == nil {
			nc.Close()
			t.Fatalf("nats, %s: connected without the token", name)
		}
		if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("nats, %s: %v, want an authorization error", name, err)
		}
	}
	nc, err := n.Connect()
	if err != nil {
		t.Fatalf("redfix's in-process client: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("jetstream through redfix's client: %v", err)
	}
	other := startNATS(t, Options{StoreDir: t.TempDir(), DontListen: true})
	defer other.Shutdown()
	if n.Token() == other.Token() || len(n.Token()) < 20 {
		t.Errorf("tokens %q and %q: want a new random one on each start", n.Token(), other.Token())
	}

	r, err := StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	own := r.Client()
	defer own.Close()
	if err := own.Set(ctx, "report", "stored", 0).Err(); err != nil {
		t.Fatalf("redfix's client: %v", err)
	}
	for name, pw := range map[string]string{"no password": "", "wrong password": "guess"} {
		rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), Password: pw, MaxRetries: -1})
		perr := rdb.Ping(ctx).Err()
		v, gerr := rdb.Get(ctx, "report").Result()
		rdb.Close()
		for cmd, err := range map[string]error{"PING": perr, "GET": gerr} {
			var answered redis.Error
			if err == nil || !errors.As(err, &answered) {
				t.Errorf("redis, %s: %s answered %v (value %q), want the server's refusal", name, cmd, err, v)
			}
		}
	}
	r2, err := StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r.Password() == r2.Password() {
		t.Error("two starts share a password: want a new random one on each start")
	}
}
