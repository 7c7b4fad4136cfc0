package testsvc

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Command is a program a test runs as a process of its own (the bot's and
// the worker's binaries, say): killed with the test binary, stopped when
// the test ends (SIGTERM, SIGKILL after a minute), its output kept, and
// the output's end logged when the test failed.
type Command struct {
	cmd  *exec.Cmd
	out  syncBuffer
	done chan struct{}
}

// StartCommand runs bin with args in env; name is what the failure log
// calls it.
func StartCommand(t testing.TB, name, bin string, env []string, args ...string) *Command {
	t.Helper()
	c := &Command{done: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = env
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(time.Minute):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			out := c.Output()
			t.Logf("%s output (end):\n%s", name, out[max(0, len(out)-12000):])
		}
	})
	return c
}

// Output is what the command printed so far, both streams.
func (c *Command) Output() string { return c.out.String() }

// Alive reports whether the command is still running.
func (c *Command) Alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}
