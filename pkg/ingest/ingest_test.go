package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config/logtest"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
)

// goTestReport is a small `go test -json` report with one failing test.
const goTestReport = `{"Action":"run","Package":"example.com/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/calc","Test":"TestAdd","Output":"    calc_test.go:9: Add(1, 2) = -1, want 3\n"}
{"Action":"fail","Package":"example.com/calc","Test":"TestAdd","Elapsed":0}
{"Action":"fail","Package":"example.com/calc","Elapsed":0.01}
`

// testConfig redelivers quickly: a short ack wait and retry delay.
func testConfig() Config {
	return Config{
		AckWait:    time.Second,
		MaxDeliver: 3,
		RetryDelay: 50 * time.Millisecond,
	}
}

func openIntake(t *testing.T, js jetstream.JetStream, cfg Config) *Intake {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := Open(ctx, js, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func submission(repo string) Submission {
	return Submission{Repo: repo, Commit: "0123456789abcdef", Branch: "main", Report: []byte(goTestReport)}
}

func submit(t *testing.T, in *Intake, s Submission) (duplicate bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dup, err := in.Submit(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return dup
}

// outstanding is the number of submissions not yet delivered plus those
// delivered and not settled.
func outstanding(t *testing.T, in *Intake) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := in.s.Lag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// delivery is one call of the handler.
type delivery struct {
	id      string
	attempt Attempt
}

// recorder is a Handler that records each call and answers with the result
// of its answer function.
type recorder struct {
	mu     sync.Mutex
	calls  []delivery
	answer func(ctx context.Context, s Submission, a Attempt) error
}

func (r *recorder) handle(ctx context.Context, s Submission, a Attempt) error {
	r.mu.Lock()
	r.calls = append(r.calls, delivery{id: s.ID, attempt: a})
	r.mu.Unlock()
	return r.answer(ctx, s, a)
}

func (r *recorder) deliveries(id string) []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Attempt
	for _, c := range r.calls {
		if c.id == id {
			out = append(out, c.attempt)
		}
	}
	return out
}

// run starts in.Run with h and stops it when the test ends; the returned
// function stops it earlier.
func run(t *testing.T, in *Intake, h Handler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := testsvc.Receive(t, 30*time.Second, "Run returns after its context was cancelled", done); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestSubmitDeduplicatesByID(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	in := openIntake(t, js, testConfig())

	s := submission("/repos/calc")
	if submit(t, in, s) {
		t.Fatal("first submission reported as a duplicate")
	}
	if !submit(t, in, s) {
		t.Fatal("second submission of the same content not reported as a duplicate")
	}
	other := submission("/repos/calc")
	other.Commit = "fedcba9876543210"
	if submit(t, in, other) {
		t.Fatal("a submission about another commit was reported as a duplicate")
	}
	// An explicit delivery ID wins over the content: a webhook delivered
	// twice is one submission even if its body differs.
	a := submission("/repos/calc")
	a.ID = "delivery-1"
	b := submission("/repos/other")
	b.ID = "delivery-1"
	if submit(t, in, a) || !submit(t, in, b) {
		t.Fatal("submissions with the same delivery ID were not deduplicated")
	}
	// What the stream stored, from the stream itself (its state is current
	// once a publish is acknowledged; a consumer's pending count is
	// updated later, asynchronously).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, in.s.Config().Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 3 {
		t.Fatalf("stream holds %d submissions, want 3", info.State.Msgs)
	}
	if ContentID(s) == ContentID(other) {
		t.Fatal("different submissions share a content ID")
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	valid := submission("/repos/calc")
	res, err := Check(valid)
	if err != nil {
		t.Fatalf("valid submission rejected: %v", err)
	}
	if len(res.Failures) != 1 || res.Failures[0].ID() != "example.com/calc.TestAdd" {
		t.Fatalf("parsed failures = %+v, want example.com/calc.TestAdd", res.Failures)
	}
	for _, tc := range []struct {
		name   string
		change func(*Submission)
		reason string
	}{
		{"no repository", func(s *Submission) { s.Repo = "" }, "no repository"},
		{"no commit", func(s *Submission) { s.Commit = "" }, "no commit"},
		{"empty report", func(s *Submission) { s.Report = nil }, "empty"},
		{"plain text report", func(s *Submission) { s.Report = []byte("ok  \texample.com/calc\t0.01s\n") }, "unknown report format"},
		{"malformed junit", func(s *Submission) { s.Report = []byte("<testsuite><testcase") }, "junit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := submission("/repos/calc")
			tc.change(&s)
			_, err := Check(s)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check = %v, want an ErrInvalid", err)
			}
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.reason)) {
				t.Fatalf("Check = %q, want a reason mentioning %q", err, tc.reason)
			}
		})
	}
}

func TestRunAcksHandledSubmission(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	in := openIntake(t, js, cfg)
	rec := &recorder{answer: func(context.Context, Submission, Attempt) error { return nil }}
	s := submission("/repos/calc")
	s.ID = "ok-1"
	submit(t, in, s)
	run(t, in, rec.handle)

	testsvc.Poll(t, 30*time.Second, "the submission is handled", func() bool { return len(rec.deliveries("ok-1")) >= 1 })
	testsvc.Poll(t, 30*time.Second, "the handled submission is no longer outstanding", func() bool { return outstanding(t, in) == 0 })
	// Several ack waits later it has not come back.
	testsvc.Holds(t, 3*cfg.AckWait, "one delivery of an acked submission", func() bool { return len(rec.deliveries("ok-1")) == 1 })
	if got := rec.deliveries("ok-1"); got[0] != (Attempt{N: 1, Last: false}) {
		t.Fatalf("attempt = %+v, want {N:1 Last:false}", got[0])
	}
}

func TestRunTerminatesInvalidSubmission(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	in := openIntake(t, js, cfg)
	rec := &recorder{answer: func(_ context.Context, s Submission, _ Attempt) error {
		if _, err := Check(s); err != nil {
			return fmt.Errorf("triage %s: %w", s.ID, err)
		}
		return nil
	}}
	bad := submission("/repos/calc")
	bad.ID, bad.Report = "bad-1", []byte("not a report")
	submit(t, in, bad)
	run(t, in, rec.handle)

	testsvc.Poll(t, 30*time.Second, "the submission is handled", func() bool { return len(rec.deliveries("bad-1")) >= 1 })
	testsvc.Poll(t, 30*time.Second, "the invalid submission is no longer outstanding", func() bool { return outstanding(t, in) == 0 })
	testsvc.Holds(t, 3*cfg.AckWait, "one delivery of an invalid submission", func() bool { return len(rec.deliveries("bad-1")) == 1 })
}

func TestRunRetriesUntilLastAttempt(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	in := openIntake(t, js, cfg)
	rec := &recorder{answer: func(context.Context, Submission, Attempt) error {
		return errors.New("redis is unavailable")
	}}
	s := submission("/repos/calc")
	s.ID = "flaky-infra"
	submit(t, in, s)
	run(t, in, rec.handle)

	testsvc.Poll(t, 30*time.Second, "the submission is delivered MaxDeliver times", func() bool {
		return len(rec.deliveries("flaky-infra")) == cfg.MaxDeliver
	})
	want := []Attempt{{N: 1}, {N: 2}, {N: 3, Last: true}}
	if got := rec.deliveries("flaky-infra"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("attempts = %+v, want %+v", got, want)
	}
	testsvc.Poll(t, 30*time.Second, "the given-up submission is no longer outstanding", func() bool { return outstanding(t, in) == 0 })
	testsvc.Holds(t, 3*cfg.AckWait, "no delivery after the last attempt", func() bool {
		return len(rec.deliveries("flaky-infra")) == cfg.MaxDeliver
	})
}

func TestRunRetryDelay(t *testing.T) {
	t.Parallel()
	// The retry delay grows with the attempt: the second delivery comes
	// RetryDelay after the first failed, the third 2×RetryDelay after the
	// second.
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	cfg.RetryDelay = 400 * time.Millisecond
	cfg.AckWait = time.Minute // only the nak delay can bring it back
	in := openIntake(t, js, cfg)
	var (
		mu    sync.Mutex
		times []time.Time
	)
	h := func(context.Context, Submission, Attempt) error {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		return errors.New("try again")
	}
	submit(t, in, submission("/repos/calc"))
	run(t, in, h)
	testsvc.Poll(t, 30*time.Second, "three deliveries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(times) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	if d := times[1].Sub(times[0]); d < 350*time.Millisecond {
		t.Errorf("second delivery %s after the first, want at least RetryDelay (400ms)", d)
	}
	if d := times[2].Sub(times[1]); d < 750*time.Millisecond {
		t.Errorf("third delivery %s after the second, want at least 2×RetryDelay (800ms)", d)
	}
}

func TestRunTerminatesUndecodableMessage(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	in := openIntake(t, js, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, in.cfg.Subject, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	good := submission("/repos/calc")
	good.ID = "after-garbage"
	submit(t, in, good)
	rec := &recorder{answer: func(context.Context, Submission, Attempt) error { return nil }}
	run(t, in, rec.handle)

	testsvc.Poll(t, 30*time.Second, "the submission after the garbage is handled", func() bool {
		return len(rec.deliveries("after-garbage")) >= 1
	})
	testsvc.Poll(t, 30*time.Second, "no message is outstanding", func() bool { return outstanding(t, in) == 0 })
	testsvc.Holds(t, 3*cfg.AckWait, "the handler saw only the decodable submission", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.calls) == 1
	})
}

func TestRunRecoversPanic(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	in := openIntake(t, js, cfg)
	rec := &recorder{answer: func(_ context.Context, _ Submission, a Attempt) error {
		if a.N == 1 {
			panic("bug in triage")
		}
		return nil
	}}
	s := submission("/repos/calc")
	s.ID = "panics-once"
	submit(t, in, s)
	run(t, in, rec.handle)

	testsvc.Poll(t, 30*time.Second, "the submission is retried after the panic", func() bool {
		return len(rec.deliveries("panics-once")) == 2
	})
	testsvc.Poll(t, 30*time.Second, "the submission is no longer outstanding", func() bool { return outstanding(t, in) == 0 })
	testsvc.Holds(t, 3*cfg.AckWait, "no delivery after the ack", func() bool { return len(rec.deliveries("panics-once")) == 2 })
}

func TestRunAcksWhenShutdownFollowsSuccess(t *testing.T) {
	t.Parallel()
	// A handler that succeeds just as the intake shuts down: the submission
	// was triaged and must be acked, not triaged again once AckWait passes.
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	in := openIntake(t, js, cfg)
	s := submission("/repos/calc")
	s.ID = "done-at-shutdown"
	submit(t, in, s)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- in.Run(ctx, func(context.Context, Submission, Attempt) error {
			cancel() // the shutdown signal arrives while the handler finishes
			return nil
		})
	}()
	if err := testsvc.Receive(t, 30*time.Second, "Run returns after its context was cancelled", done); err != nil {
		t.Fatal(err)
	}

	rec := &recorder{answer: func(context.Context, Submission, Attempt) error { return nil }}
	run(t, in, rec.handle)
	testsvc.Holds(t, 3*cfg.AckWait, "no redelivery of a triaged submission", func() bool {
		return len(rec.deliveries("done-at-shutdown")) == 0
	})
	testsvc.Poll(t, 30*time.Second, "no submission is outstanding", func() bool { return outstanding(t, in) == 0 })
}

func TestRunNaksOnShutdown(t *testing.T) {
	t.Parallel()
	// A handler interrupted by the shutdown hands the submission back at
	// once: the next instance gets it without waiting for AckWait.
	js := embeddedtest.JetStream(t)
	cfg := testConfig()
	cfg.AckWait = time.Minute
	in := openIntake(t, js, cfg)
	s := submission("/repos/calc")
	s.ID = "interrupted"
	submit(t, in, s)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- in.Run(ctx, func(ctx context.Context, _ Submission, _ Attempt) error {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	if err := testsvc.Receive(t, 30*time.Second, "Run returns after its context was cancelled", done); err != nil {
		t.Fatal(err)
	}

	rec := &recorder{answer: func(context.Context, Submission, Attempt) error { return nil }}
	run(t, in, rec.handle)
	testsvc.Poll(t, 30*time.Second, "the interrupted submission is redelivered", func() bool {
		return len(rec.deliveries("interrupted")) == 1
	})
	if got := rec.deliveries("interrupted")[0]; got.N != 2 {
		t.Fatalf("redelivery attempt %d, want 2", got.N)
	}
}

// A retried submission's JSON log names each key once per line (a log
// shipper refuses a line with a key twice), its attempt among them.
func TestRunLogsEachKeyOnce(t *testing.T) {
	t.Parallel()
	js := embeddedtest.JetStream(t)
	log, buf := logtest.JSON(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := Open(ctx, js, testConfig(), log)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{answer: func(_ context.Context, _ Submission, a Attempt) error {
		if a.N == 1 {
			return errors.New("redis is unavailable")
		}
		return nil
	}}
	s := submission("/repos/calc")
	s.ID = "retried"
	submit(t, in, s)
	stop := run(t, in, rec.handle)
	testsvc.Poll(t, 30*time.Second, "the submission is triaged on its second attempt", func() bool {
		return len(rec.deliveries("retried")) == 2 && outstanding(t, in) == 0
	})
	stop()
	_ = log.Sync()

	retried := false
	for _, l := range logtest.Lines(t, buf.Bytes()) {
		if l["msg"] == "triage failed; will retry" {
			retried = true
			if l["attempt"] != float64(1) {
				t.Errorf("the retry's line says attempt %v, want 1: %v", l["attempt"], l)
			}
		}
	}
	if !retried {
		t.Fatalf("no retry logged:\n%s", buf.Bytes())
	}
}
