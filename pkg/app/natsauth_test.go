package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
)

// startAuthNATS runs a NATS server with JetStream that requires a user and
// password, as the shipped manifests configure it.
func startAuthNATS(t *testing.T) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		JetStream: true, StoreDir: t.TempDir(), JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 256 << 20,
		Users: []*server.User{{Username: "redfix", Password: "s3cret-nats"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(2 * time.Minute) {
		t.Fatal("NATS did not start")
	}
	return srv
}

func TestNATSCredentialsFromTheEnvironment(t *testing.T) {
	srv := startAuthNATS(t)
	env := map[string]string{
		"REDFIX_NATS_URL": srv.ClientURL(), "REDFIX_NATS_USER": "redfix", "REDFIX_NATS_PASSWORD": "s3cret-nats",
		"REDFIX_DATA_DIR": t.TempDir(),
	}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Secrets(); !strings.Contains(strings.Join(got, " "), "s3cret-nats") {
		t.Errorf("the NATS password is not among the secrets redaction hides: %q", got)
	}

	// Without credentials, or with the wrong password, the server refuses.
	for name, opts := range map[string][]nats.Option{
		"none":           nil,
		"wrong password": NATSAuth(config.NATS{User: "redfix", Password: "guess"}),
	} {
		nc, err := nats.Connect(srv.ClientURL(), opts...)
		if err == nil {
			nc.Close()
			t.Fatalf("%s: connected to a server that requires credentials", name)
		}
		if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Fatalf("%s: %v, want an authorization error", name, err)
		}
	}

	// The system the bot and the workers start logs in and is ready.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sys, err := Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if err := sys.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
}

func TestNATSCredentialsAreOneKind(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"user and token":    {"REDFIX_NATS_USER": "u", "REDFIX_NATS_PASSWORD": "p", "REDFIX_NATS_TOKEN": "t"},
		"user, no password": {"REDFIX_NATS_USER": "u"},
	} {
		if _, err := config.Load("", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "nats") {
			t.Errorf("%s: %v, want an error about nats", name, err)
		}
	}
}
