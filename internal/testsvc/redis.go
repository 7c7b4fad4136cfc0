package testsvc

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Redis is a real redis-server (Debian's) on a loopback port of the test's
// own, without persistence.
type Redis struct {
	p        *process
	port     int
	password string
}

// StartRedis starts redis-server, requiring password when it is not
// empty, and stops it when the test ends.
func StartRedis(t testing.TB, password string) *Redis {
	t.Helper()
	path := Need(t, "redis-server", "redis-server")
	r := &Redis{port: FreePort(t), password: password}
	args := []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", t.TempDir()}
	if password != "" {
		args = append(args, "--requirepass", password)
	}
	r.p = &process{t: t, name: "redis-server", path: path, args: args, ready: r.ping}
	r.p.start()
	t.Cleanup(r.p.stop)
	return r
}

func (r *Redis) ping(ctx context.Context) error {
	rdb := r.Client()
	defer rdb.Close()
	return rdb.Ping(ctx).Err()
}

// Addr is host:port.
func (r *Redis) Addr() string { return loopback(r.port) }

// Password is the password it requires ("" for none).
func (r *Redis) Password() string { return r.password }

// Client is a client of it, with its password.
func (r *Redis) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.Addr(), Password: r.password})
}

// Stop kills it (its data is lost: it keeps none).
func (r *Redis) Stop() { r.p.stop() }

// Start starts it again on the same port after Stop, and waits until it
// answers.
func (r *Redis) Start() {
	r.p.t.Helper()
	r.p.start()
}
