// Package testkit is what redfix's tests share: polling with a deadline
// instead of sleeping, free loopback ports, real servers started as child
// processes (Debian's redis-server), and redfix's own commands built once
// per test binary. Only tests import it.
package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Poll checks cond every 50 ms until it holds, and fails the test if it
// still does not after timeout. Deadlines are generous: machines running
// the tests are shared and loaded, and nothing is asserted about time.
func Poll(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: still not true: %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FreePort is a loopback TCP port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Require fails the test under CI when the program is missing (CI installs
// what the tests need) and skips it elsewhere.
func Require(t testing.TB, program, why string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed and CI is set: %s (.ci/run installs it)", program, why)
		}
		t.Skipf("%s is not installed: %s", program, why)
	}
	return p
}

// Redis is a real redis-server on a loopback port of its own, stopped when
// the test ends.
type Redis struct {
	Port int
	cmd  *exec.Cmd
}

// StartRedis starts redis-server (memory only) and waits until it answers.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	Require(t, "redis-server", "the test runs against a real Redis")
	r := &Redis{Port: FreePort(t)}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	r.cmd = cmd
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rdb.Close()
	Poll(t, 20*time.Second, "redis-server answers", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		return rdb.Ping(ctx).Err() == nil
	})
	return r
}

// Addr is host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }

// Binaries are redfix's commands (cmd/bot, cmd/worker) built once per
// test binary and build tags, into dir.
type Binaries struct {
	once sync.Once
	dir  string
	err  error
}

// Build builds the commands with the given build tags (none: a release
// build) under dir, once; later calls return the same binaries.
func (b *Binaries) Build(t testing.TB, dir string, tags ...string) (bot, worker string) {
	t.Helper()
	b.once.Do(func() {
		b.dir = dir
		args := []string{"build", "-o", dir + string(filepath.Separator)}
		if len(tags) > 0 {
			args = append(args, "-tags", strings.Join(tags, ","))
		}
		args = append(args, "github.com/redfix/redfix/cmd/bot", "github.com/redfix/redfix/cmd/worker")
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return filepath.Join(b.dir, "bot"), filepath.Join(b.dir, "worker")
}
