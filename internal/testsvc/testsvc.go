// Package testsvc starts the real servers that tests run against, Debian's
// redis-server and nats-server, as child processes on loopback ports of
// their own, and stops them when the test ends. A test may stop and start a
// server again (same port, same store) to see what a restart does.
//
// The binaries are found on PATH. Where one is missing the test is skipped
// with a message, except under CI (CI set, as .ci/run runs), where it fails:
// .ci/run installs them, and a skipped test there would hide a missing
// install step.
package testsvc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Need returns the path of binary, found on PATH. When it is missing the
// test is skipped, or fails under CI; pkg is the Debian package that
// brings it.
func Need(t testing.TB, binary, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(binary)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not on PATH and CI is set: .ci/run installs it (Debian package %s)", binary, pkg)
	}
	t.Skipf("%s is not on PATH: `apt-get install %s` to run this test", binary, pkg)
	return ""
}

// FreePort is a loopback TCP port nobody listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Poll checks cond until it holds, failing the test once it has waited
// timeout (by a Stopwatch: time the machine did not run the test is not
// counted).
func Poll(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	PollWithin(t, NewStopwatch(), timeout, what, cond)
}

// PollWithin checks cond until it holds, failing the test once sw has
// counted more than budget: several waits may share one budget.
func PollWithin(t testing.TB, sw *Stopwatch, budget time.Duration, what string, cond func() bool) {
	t.Helper()
	pollWithin(t, sw, budget, what, nil, cond)
}

// PollSeeing is Poll for a wait whose failure is told best by what the
// test saw last: seen is called once, when the wait fails, and its answer
// ends the message (a task's status, a process list, a server's output).
func PollSeeing(t testing.TB, timeout time.Duration, what string, seen func() string, cond func() bool) {
	t.Helper()
	pollWithin(t, NewStopwatch(), timeout, what, seen, cond)
}

// Receive waits for a value on ch and returns it, failing the test once it
// has waited timeout (by a Stopwatch) with none: where a select on
// time.After would count the time the machine was paused.
func Receive[T any](t testing.TB, timeout time.Duration, what string, ch <-chan T) T {
	t.Helper()
	var v T
	Poll(t, timeout, what, func() bool {
		select {
		case v = <-ch:
			return true
		default:
			return false
		}
	})
	return v
}

func pollWithin(t testing.TB, sw *Stopwatch, budget time.Duration, what string, seen func() string, cond func() bool) {
	t.Helper()
	sw.Lap(0)
	for !cond() {
		sw.Lap(stallGap)
		if sw.Ran() > budget {
			last := ""
			if seen != nil {
				last = "; last seen: " + seen()
			}
			t.Fatalf("after %s: still not true: %s%s%s", budget, what, last, sw.stalls())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stallGap is the longest a poll's turn (a check and a 20 ms sleep) may
// take before it counts as a stall: on a loaded machine a turn takes
// milliseconds to seconds, never a minute.
const stallGap = time.Minute

// A Stopwatch measures how long a test has been waiting, leaving out the
// time the machine did not run it. CI's machines are virtual and can be
// paused: a CI run once saw its monotonic clock move 11 minutes while the
// wall clock (its processes' log times) moved 40 seconds, and a deadline
// counted on the monotonic clock failed a run that was well on its way.
// So each lap counts the lesser of the two clocks' advance (a clock that
// jumped is not believed), and a polling turn longer than stallGap counts
// as a stall, not as waiting.
type Stopwatch struct {
	last         time.Time
	ran, stalled time.Duration
}

// NewStopwatch starts a stopwatch now.
func NewStopwatch() *Stopwatch { return &Stopwatch{last: time.Now()} }

// Lap adds the time since the last lap. A lap longer than maxLap (when
// maxLap > 0) is counted as stalled.
func (s *Stopwatch) Lap(maxLap time.Duration) {
	now := time.Now()
	mono, wall := now.Sub(s.last), now.Round(0).Sub(s.last.Round(0))
	s.last = now
	s.count(mono, wall, maxLap)
}

// count adds a lap the monotonic clock measured as mono and the wall clock
// as wall.
func (s *Stopwatch) count(mono, wall, maxLap time.Duration) {
	d := max(min(mono, wall), 0)
	if jumped := mono - d; jumped > 0 {
		s.stalled += jumped
	}
	if maxLap > 0 && d > maxLap {
		s.stalled += d
		return
	}
	s.ran += d
}

// Ran is the time counted so far.
func (s *Stopwatch) Ran() time.Duration { return s.ran }

// stalls says how much time was left out, when any was.
func (s *Stopwatch) stalls() string {
	if s.stalled < time.Second {
		return ""
	}
	return fmt.Sprintf(" (another %s not counted: the machine stalled or a clock jumped)", s.stalled.Round(time.Second))
}

// process is a server run as a child process that can be stopped and
// started again with the same arguments.
type process struct {
	t     testing.TB
	name  string
	path  string
	args  []string
	ready func(context.Context) error

	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// start runs the server and waits until ready answers, failing the test if
// the server exits first or is not ready in time.
func (p *process) start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return
	}
	out := &syncBuffer{}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, killed if the test binary dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.cmd, p.out, p.done = cmd, out, done
	// Counted by a Stopwatch: a stalled machine does not fail the start.
	sw, wait := NewStopwatch(), time.Minute
	var last error
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		last = p.ready(ctx)
		cancel()
		if last == nil {
			return
		}
		select {
		case <-done:
			p.cmd = nil
			p.t.Fatalf("%s exited before it was ready: %v\n%s", p.name, cmd.ProcessState, out.String())
		default:
		}
		if sw.Lap(stallGap); sw.Ran() > wait {
			p.killLocked()
			p.t.Fatalf("%s not ready after %s%s: %v\n%s", p.name, wait, sw.stalls(), last, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop kills the server and waits for it to exit. Calling it again does
// nothing.
func (p *process) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killLocked()
}

func (p *process) killLocked() {
	if p.cmd == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	p.cmd = nil
}

// output is what the server printed so far.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out == nil {
		return ""
	}
	return p.out.String()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// dial reports whether something accepts TCP connections on addr.
func dial(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// Holds checks cond every 50 ms for d and fails the test the first time it
// does not hold: for what must stay true (no redelivery, no second pull
// request), where Poll is for what must become true.
func Holds(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("stopped holding: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
