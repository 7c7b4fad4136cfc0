package ingestbench

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Servers are a nats-server with JetStream and a redis-server, the binaries
// found on PATH, run as child processes on loopback ports of their own.
type Servers struct {
	NATSURL   string
	RedisAddr string
	procs     []*exec.Cmd
}

// StartServers starts nats-server (JetStream stored under dir) and
// redis-server (memory only) and waits until both accept connections.
func StartServers(ctx context.Context, dir string) (_ *Servers, err error) {
	s := &Servers{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	np, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := s.start(ctx, "nats-server", "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(np), "-sd", filepath.Join(dir, "nats")); err != nil {
		return nil, err
	}
	rp, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := s.start(ctx, "redis-server", "--port", strconv.Itoa(rp), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir); err != nil {
		return nil, err
	}
	s.NATSURL = "nats://" + loopback(np)
	s.RedisAddr = loopback(rp)
	for _, addr := range []string{loopback(np), s.RedisAddr} {
		if err := waitListening(ctx, addr, 30*time.Second); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Servers) start(ctx context.Context, name string, args ...string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%s is not on PATH (Debian package %s): %w", name, name, err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	s.procs = append(s.procs, cmd)
	return nil
}

// Close kills the servers and waits for them.
func (s *Servers) Close() {
	for _, c := range s.procs {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	}
	s.procs = nil
}

// Pids are the servers' process ids (nats-server's, then redis-server's).
func (s *Servers) Pids() []int {
	var ps []int
	for _, c := range s.procs {
		ps = append(ps, c.Process.Pid)
	}
	return ps
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// waitListening dials addr until it answers or timeout passes.
func waitListening(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return c.Close()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s: %w", addr, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
