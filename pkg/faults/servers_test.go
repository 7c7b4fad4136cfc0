package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded"
)

// freePort is a loopback TCP port nobody listens on right now.
func freePort(t testing.TB) int { return testsvc.FreePort(t) }

// startRedis is a real redis-server on a port of the test's own, which the
// test stops and starts.
func startRedis(t *testing.T) *testsvc.Redis { return testsvc.StartRedis(t, "") }

// natsToken is the token the fault tests' NATS requires: the same across
// its restarts, so that the clients already running log in again.
const natsToken = "faults-nats-token"

// natsServer is an embedded NATS with JetStream on a store directory and a
// port that survive its restarts; its URL carries the token.
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

func (n *natsServer) URL() string { return fmt.Sprintf("nats://%s@127.0.0.1:%d", natsToken, n.port) }

func (n *natsServer) start() {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: filepath.Join(n.dir, "js"), Port: n.port, Token: natsToken})
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
