package k8s_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/redfix/redfix/internal/testsvc"
)

// shippedConfig is a file of the base's rendered config maps.
func shippedConfig(t *testing.T, file string) string {
	t.Helper()
	r, err := load(filesys.MakeFsOnDisk(), "base")
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range objectsOf[*corev1.ConfigMap](r) {
		if v, ok := cm.Data[file]; ok {
			return v
		}
	}
	t.Fatalf("no config map holds %s", file)
	return ""
}

// The shipped nats.conf, read by the NATS server itself with the
// credentials from the environment as the pod gets them: JetStream on, and
// clients without the user's password refused.
func TestShippedNATSConfigRequiresCredentials(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte(shippedConfig(t, "nats.conf")), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NATS_USER", "redfix")
	t.Setenv("NATS_PASSWORD", "pod-secret")
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("nats-server reads the shipped config: %v", err)
	}
	if !opts.JetStream || opts.StoreDir != "/data/jetstream" {
		t.Fatalf("JetStream %v on %q, want on /data/jetstream (the volume)", opts.JetStream, opts.StoreDir)
	}
	// Here: a temporary store and free ports instead of the pod's.
	opts.StoreDir, opts.Host, opts.Port, opts.HTTPPort, opts.NoSigs, opts.NoLog = t.TempDir(), "127.0.0.1", -1, 0, true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(2 * time.Minute) {
		t.Fatal("NATS did not start")
	}
	if nc, err := nats.Connect(srv.ClientURL()); err == nil {
		nc.Close()
		t.Fatal("connected without credentials")
	}
	nc, err := nats.Connect(srv.ClientURL(), nats.UserInfo("redfix", "pod-secret"))
	if err != nil {
		t.Fatalf("connect with the secret's credentials: %v", err)
	}
	defer nc.Close()
	if _, err := nc.JetStream(); err != nil {
		t.Fatal(err)
	}
}

// The shipped redis.conf, run by a real redis-server: a password is
// required, and what was written comes back after a restart on the same
// volume (the append-only file), as the publish ledger must.
func TestShippedRedisConfigKeepsStateAndRequiresPassword(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (.ci/run installs it)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// The pod's volume is /data; redis-server changes into it while it
	// reads the file, so the copy names the test's directory instead.
	shipped := shippedConfig(t, "redis.conf")
	if !strings.Contains(shipped, "\ndir /data\n") {
		t.Fatal("redis.conf does not keep its files in /data (the volume)")
	}
	conf := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(conf, []byte(strings.Replace(shipped, "\ndir /data\n", "\ndir "+data+"\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// As the pod starts it (redis.yaml), with the volume and port moved here.
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, conf, "--requirepass", "pod-secret", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--daemonize", "no")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		rdb := redis.NewClient(&redis.Options{Addr: addr, Password: "pod-secret"})
		defer rdb.Close()
		testsvc.Poll(t, time.Minute, "redis-server answers", func() bool { return rdb.Ping(ctx).Err() == nil })
		return cmd
	}
	cmd := start()
	anon := redis.NewClient(&redis.Options{Addr: addr})
	defer anon.Close()
	if err := anon.Set(ctx, "redfix-ops-test", "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("a write without the password: %v, want NOAUTH", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, Password: "pod-secret"})
	defer rdb.Close()
	if err := rdb.Set(ctx, "redfix:publish:ledger-test", "pull/7", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.ConfigGet(ctx, "appendonly").Result(); err != nil || got["appendonly"] != "yes" {
		t.Fatalf("appendonly: %v %v", got, err)
	}
	// Kubernetes stops the pod with SIGTERM; Redis flushes and exits.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	start()
	got, err := rdb.Get(ctx, "redfix:publish:ledger-test").Result()
	if err != nil || got != "pull/7" {
		t.Fatalf("after a restart on the same volume: %q %v, want pull/7", got, err)
	}
}
