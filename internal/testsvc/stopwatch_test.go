package testsvc

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestStopwatchLeavesOutStallsAndJumps(t *testing.T) {
	var s Stopwatch
	s.count(3*time.Second, 3*time.Second, stallGap) // an ordinary turn
	if s.Ran() != 3*time.Second || s.stalls() != "" {
		t.Fatalf("ran %s, stalls %q after an ordinary turn", s.Ran(), s.stalls())
	}
	// The monotonic clock jumped 11 minutes over 40 s of wall time (a
	// paused virtual machine): 40 s is counted.
	s.count(11*time.Minute, 40*time.Second, 0)
	if s.Ran() != 43*time.Second {
		t.Fatalf("ran %s after a monotonic jump, want 43s", s.Ran())
	}
	// The wall clock stepped back: nothing is counted, nothing negative.
	s.count(time.Second, -5*time.Minute, stallGap)
	if s.Ran() != 43*time.Second {
		t.Fatalf("ran %s after the wall clock stepped back, want 43s", s.Ran())
	}
	// Both clocks moved 5 minutes during one polling turn: a stall.
	s.count(5*time.Minute, 5*time.Minute, stallGap)
	if s.Ran() != 43*time.Second {
		t.Fatalf("ran %s after a stalled turn, want 43s", s.Ran())
	}
	// Between polls (no limit on a lap) a long wait is waiting.
	s.count(5*time.Minute, 5*time.Minute, 0)
	if s.Ran() != 5*time.Minute+43*time.Second {
		t.Fatalf("ran %s after a long lap with no limit", s.Ran())
	}
	if got := s.stalls(); !strings.Contains(got, "not counted") {
		t.Fatalf("stalls() = %q, want the time left out named", got)
	}
}

func TestPollFailsOnceItsBudgetIsSpent(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Poll(ft, 100*time.Millisecond, "never", func() bool { return false })
	}()
	<-done
	if !strings.Contains(ft.msg, "still not true: never") {
		t.Fatalf("Poll's failure said %q", ft.msg)
	}
}

func TestPollSeeingAndReceiveSayWhatTheyWaitedFor(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		PollSeeing(ft, 50*time.Millisecond, "the task is queued", func() string { return "running" }, func() bool { return false })
	}()
	<-done
	if !strings.Contains(ft.msg, "still not true: the task is queued; last seen: running") {
		t.Fatalf("PollSeeing's failure said %q", ft.msg)
	}

	ch := make(chan int, 1)
	ch <- 7
	if got := Receive(t, time.Minute, "a value", ch); got != 7 {
		t.Fatalf("Receive = %d, want 7", got)
	}
	ft = &fatalRecorder{TB: t}
	done = make(chan struct{})
	go func() {
		defer close(done)
		Receive(ft, 50*time.Millisecond, "a second value", ch)
	}()
	<-done
	if !strings.Contains(ft.msg, "still not true: a second value") {
		t.Fatalf("Receive's failure said %q", ft.msg)
	}
}

// fatalRecorder keeps what Fatalf says and ends the goroutine, as the
// testing package does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
