package app

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/embedded"
)

// tcpNATSToken is the token of every tcpNATS server.
const tcpNATSToken = "tcp-nats-token"

// tcpNATS is an in-process NATS server with JetStream on a loopback port,
// standing for a configured one: it requires tcpNATSToken, which it puts
// in the test's environment (REDFIX_NATS_TOKEN).
func tcpNATS(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Setenv("REDFIX_NATS_TOKEN", tcpNATSToken)
	n, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: t.TempDir(), Port: -1, Token: tcpNATSToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return n.URL()
}

// startCommands are the long-running commands, which must check their
// stores before they serve or consume.
var startCommands = map[string]func(context.Context, []string, io.Writer, io.Writer) error{
	"bot serve": Serve, "worker run": WorkerRun,
}

// refused runs each long-running command with env and checks that it
// exits with an error holding every one of want and none of never, before
// it says it serves or consumes.
func refused(t *testing.T, env map[string]string, want, never []string) {
	t.Helper()
	env["REDFIX_DATA_DIR"] = t.TempDir()
	env["REDFIX_HTTP_ADDR"] = "127.0.0.1:0"
	env["REDFIX_STARTUP_WAIT"] = "1s"
	env["REDFIX_LOG_FORMAT"] = "json"
	for k, v := range env {
		t.Setenv(k, v)
	}
	for name, run := range startCommands {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var stdout bytes.Buffer
		var stderr lockedBuffer // written by NATS's callbacks too
		err := run(ctx, nil, &stdout, &stderr)
		cancel()
		if err == nil {
			t.Fatalf("%s started:\n%s", name, stderr.String())
		}
		t.Logf("%s: %v", name, err)
		if ExitCode(err) == 0 {
			t.Errorf("%s: exit code 0 for %v", name, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", name, err, w)
			}
		}
		for _, n := range never {
			if strings.Contains(err.Error()+stdout.String()+stderr.String(), n) {
				t.Errorf("%s: %q is in its error or output: %v\n%s", name, n, err, stderr.String())
			}
		}
		for _, started := range []string{"bot serving", "worker consuming"} {
			if strings.Contains(stderr.String(), started) {
				t.Errorf("%s logged %q before it failed", name, started)
			}
		}
	}
}

func TestStartRefusesAWrongRedisPassword(t *testing.T) {
	r := testsvc.StartRedis(t, "right-redis-pass")
	natsURL := tcpNATS(t)
	refused(t, map[string]string{"REDFIX_NATS_URL": natsURL, "REDFIX_REDIS_ADDR": r.Addr(), "REDFIX_REDIS_PASSWORD": "wrong-redis-pass"},
		[]string{"redis at " + r.Addr(), "WRONGPASS"}, []string{"wrong-redis-pass", "right-redis-pass"})
	refused(t, map[string]string{"REDFIX_NATS_URL": natsURL, "REDFIX_REDIS_ADDR": r.Addr(), "REDFIX_REDIS_PASSWORD": ""},
		[]string{"redis at " + r.Addr(), "NOAUTH"}, nil)
}

func TestStartRefusesAnUnreachableRedis(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(testsvc.FreePort(t))
	refused(t, map[string]string{"REDFIX_NATS_URL": tcpNATS(t), "REDFIX_REDIS_ADDR": addr, "REDFIX_REDIS_PASSWORD": "some-redis-pass"},
		[]string{"redis at " + addr, "connection refused"}, []string{"some-redis-pass"})
}

func TestStartRefusesAnUnreachableNATS(t *testing.T) {
	r := testsvc.StartRedis(t, "")
	url := "nats://127.0.0.1:" + strconv.Itoa(testsvc.FreePort(t))
	refused(t, map[string]string{"REDFIX_NATS_URL": url, "REDFIX_REDIS_ADDR": r.Addr()},
		[]string{"NATS at " + url, "connection refused"}, nil)
}

func TestStartRefusesAWrongNATSPassword(t *testing.T) {
	r := testsvc.StartRedis(t, "")
	srv := startAuthNATS(t)
	refused(t, map[string]string{"REDFIX_NATS_URL": srv.ClientURL(), "REDFIX_NATS_USER": "redfix", "REDFIX_NATS_PASSWORD": "guessed-nats-pass", "REDFIX_REDIS_ADDR": r.Addr()},
		[]string{"NATS at " + srv.ClientURL(), "Authorization Violation"}, []string{"guessed-nats-pass"})
	// Credentials in the URL are not printed either.
	withCreds := strings.Replace(srv.ClientURL(), "nats://", "nats://redfix:url-nats-pass@", 1)
	refused(t, map[string]string{"REDFIX_NATS_URL": withCreds, "REDFIX_NATS_USER": "", "REDFIX_NATS_PASSWORD": "", "REDFIX_REDIS_ADDR": r.Addr()},
		[]string{"NATS at " + srv.ClientURL(), "Authorization Violation"}, []string{"url-nats-pass"})
}

func TestStartRefusesNATSWithoutJetStream(t *testing.T) {
	r := testsvc.StartRedis(t, "")
	srv := startPlainNATS(t)
	refused(t, map[string]string{"REDFIX_NATS_URL": srv.ClientURL(), "REDFIX_REDIS_ADDR": r.Addr()},
		[]string{"NATS at " + srv.ClientURL(), "JetStream"}, nil)
}

// With every store answering, the worker starts, and says so.
func TestStartWithRealStores(t *testing.T) {
	r := testsvc.StartRedis(t, "right-redis-pass")
	n := testsvc.StartNATS(t) // Debian's nats-server, the oldest supported
	for k, v := range map[string]string{
		"REDFIX_NATS_URL": n.URL(), "REDFIX_REDIS_ADDR": r.Addr(), "REDFIX_REDIS_PASSWORD": "right-redis-pass",
		"REDFIX_DATA_DIR": t.TempDir(), "REDFIX_STARTUP_WAIT": "5s",
	} {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- WorkerRun(ctx, nil, io.Discard, &stderr) }()
	testsvc.Poll(t, 2*time.Minute, "worker run starts against nats-server "+n.Version(), func() bool {
		return strings.Contains(stderr.String(), "worker consuming")
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("worker run: %v\n%s", err, stderr.String())
	}
}

// A JetStream request that goes unanswered (a cluster electing its meta
// leader drops them) is asked again within startup_wait: the first
// request to the account is dropped here, the second answered.
func TestStartAsksJetStreamAgainWhenUnanswered(t *testing.T) {
	srv := startPlainNATS(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var asked atomic.Int32
	// The meta leader's part, played by hand: the first request is lost.
	sub, err := nc.Subscribe("$JS.API.INFO", func(m *nats.Msg) {
		if asked.Add(1) == 1 {
			return
		}
		_ = m.Respond([]byte(`{"type":"io.nats.jetstream.api.v1.account_info_response","memory":0,"storage":0,"streams":0,"consumers":0}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	// The subscription is the server's before anything asks: else the
	// server answers "JetStream not enabled" itself.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	client, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	js, err := jetstream.New(client)
	if err != nil {
		t.Fatal(err)
	}
	// Far longer than the first try: a single request waiting all of it
	// would fail here.
	if err := checkJetStream(context.Background(), client, js, srv.ClientURL(), 2*time.Minute); err != nil {
		t.Fatalf("the account was not asked again: %v (asked %d times)", err, asked.Load())
	}
	if n := asked.Load(); n < 2 {
		t.Fatalf("asked %d times, want the dropped request asked again", n)
	}
}

// startPlainNATS starts an in-process NATS server without JetStream.
func startPlainNATS(t *testing.T) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(time.Minute) {
		t.Fatal("NATS did not start")
	}
	return srv
}

// The stores a System starts for itself (no NATS or Redis configured) need
// a secret of the process's: the embedded Redis refuses a client without
// its password, the embedded NATS listens on no port, and the system's own
// clients work.
func TestEmbeddedStoresNeedTheProcessSecrets(t *testing.T) {
	clearEnv(t)
	cfg, err := config.Load("", func(k string) string { return map[string]string{"REDFIX_DATA_DIR": t.TempDir()}[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sys, err := Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if err := sys.Ready(ctx); err != nil {
		t.Fatalf("the system's own clients: %v", err)
	}
	if sys.NATSURL != EmbeddedNATS {
		t.Errorf("embedded NATS at %q, want %q (no port)", sys.NATSURL, EmbeddedNATS)
	}
	rdb := redis.NewClient(&redis.Options{Addr: sys.RedisAddr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("PING without the password: %v, want NOAUTH", err)
	}
}
