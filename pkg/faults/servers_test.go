package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/embedded"
)

// freePort is a loopback TCP port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// redisServer is a real redis-server on a port of the test's own, which
// the test stops and starts.
type redisServer struct {
	t    *testing.T
	port int
	mu   sync.Mutex
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed and CI is set: the fault tests need it (.ci/run installs it)")
		}
		t.Skip("redis-server is not installed")
	}
	r := &redisServer{t: t, port: freePort(t)}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

func (r *redisServer) start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	r.cmd = cmd
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rdb.Close()
	poll(r.t, 10*time.Second, "redis-server answers", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		return rdb.Ping(ctx).Err() == nil
	})
}

func (r *redisServer) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// natsServer is an embedded NATS with JetStream on a store directory and a
// port that survive its restarts.
type natsServer struct {
	t    testing.TB
	dir  string
	port int
	mu   sync.Mutex
	srv  *embedded.NATS
}

func startNATS(t testing.TB) *natsServer {
	t.Helper()
	n := &natsServer{t: t, dir: t.TempDir(), port: freePort(t)}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

func (n *natsServer) start() {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: filepath.Join(n.dir, "js"), Port: n.port})
	if err != nil {
		n.t.Fatalf("start NATS: %v", err)
	}
	n.mu.Lock()
	n.srv = srv
	n.mu.Unlock()
}

func (n *natsServer) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv = nil
	}
}

// poll checks cond until it holds or timeout passes.
func poll(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: still not true: %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
