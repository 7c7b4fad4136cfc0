package queue

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
	"github.com/redfix/redfix/pkg/embedded"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/task"
)

// server is an in-process NATS server with JetStream on a file store.
type server struct {
	t   *testing.T
	dir string
	srv *embedded.NATS
	js  jetstream.JetStream
}

func startServer(t *testing.T, dir string) *server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: dir, DontListen: true})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := srv.Connect()
	if err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, dir: dir, srv: srv, js: js}
	t.Cleanup(s.stop)
	return s
}

func (s *server) stop() {
	s.js.Conn().Close()
	s.srv.Shutdown()
}

func (s *server) open(cfg Config) *Queue {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := Open(ctx, s.js, cfg, zaptest.NewLogger(s.t))
	if err != nil {
		s.t.Fatal(err)
	}
	return q
}

func testJob(id string) job.Job {
	return job.New(task.Task{
		ID:          "task-" + id,
		Fingerprint: id,
		Repo:        "/repos/demo",
		Commit:      "0123456789abcdef",
		Failures:    []task.Failure{{Package: "example.com/demo", Test: "TestAdd", Message: "got 3, want 4"}},
		Status:      task.StatusQueued,
		CreatedAt:   time.Now().UTC().Truncate(time.Second),
	})
}

func enqueue(t *testing.T, q *Queue, j job.Job) (duplicate bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dup, err := q.Enqueue(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	return dup
}

// next waits up to 10s for a delivery.
func next(t *testing.T, q *Queue) *Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := q.Next(ctx)
	if err != nil {
		t.Fatalf("next job: %v", err)
	}
	return d
}

// expectNone fails if a job is delivered within d.
func expectNone(t *testing.T, q *Queue, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	d, err := q.Next(ctx)
	if d != nil {
		t.Fatalf("job %s delivered again (attempt %d), want no delivery", d.Job.ID, d.Attempt)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("next: %v, want deadline exceeded", err)
	}
}

// waitLag polls until the queue's lag is want.
func waitLag(t *testing.T, q *Queue, want uint64) {
	t.Helper()
	var got uint64
	testsvc.PollSeeing(t, 30*time.Second, fmt.Sprintf("lag = %d", want), func() string { return fmt.Sprintf("lag = %d", got) }, func() bool {
		var err error
		got, err = q.Lag(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return got == want
	})
}

func TestEnqueueDeduplicatesByJobID(t *testing.T) {
	for _, storage := range []jetstream.StorageType{jetstream.FileStorage, jetstream.MemoryStorage} {
		t.Run(storage.String(), func(t *testing.T) {
			s := startServer(t, t.TempDir())
			q := s.open(Config{Storage: storage})
			if enqueue(t, q, testJob("fp-1")) {
				t.Fatal("first enqueue reported a duplicate")
			}
			if !enqueue(t, q, testJob("fp-1")) {
				t.Fatal("second enqueue of the same job ID was not reported as a duplicate")
			}
			if enqueue(t, q, testJob("fp-2")) {
				t.Fatal("a different job ID was reported as a duplicate")
			}
			waitLag(t, q, 2)
			st, err := s.js.Stream(context.Background(), DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			info, err := st.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if info.State.Msgs != 2 {
				t.Fatalf("stream holds %d messages, want 2", info.State.Msgs)
			}
			if info.Config.Storage != storage || info.Config.Retention != jetstream.WorkQueuePolicy {
				t.Fatalf("stream storage %v retention %v", info.Config.Storage, info.Config.Retention)
			}

			d := next(t, q)
			if d.Job.ID != "fp-1" || d.Attempt != 1 || d.Job.Task.Commit != "0123456789abcdef" {
				t.Fatalf("first delivery: job %q attempt %d task %+v", d.Job.ID, d.Attempt, d.Job.Task)
			}
			if err := d.Ack(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := d.Ack(context.Background()); !errors.Is(err, ErrSettled) {
				t.Fatalf("second ack: %v, want ErrSettled", err)
			}
			waitLag(t, q, 1)
		})
	}
}

func TestEnqueueRejectsInvalidJob(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{})
	bad := testJob("fp-bad")
	bad.Task.Commit = ""
	if _, err := q.Enqueue(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "commit") {
		t.Fatalf("enqueue of a job without commit: %v", err)
	}
	waitLag(t, q, 0)
}

func TestCrashedWorkerJobIsRedeliveredUntilMaxDeliver(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{AckWait: 500 * time.Millisecond, MaxDeliver: 3})
	enqueue(t, q, testJob("fp-crash"))

	for attempt := 1; attempt <= 3; attempt++ {
		d := next(t, q) // and then the worker "crashes": the delivery is dropped
		if d.Job.ID != "fp-crash" || d.Attempt != attempt {
			t.Fatalf("delivery: job %q attempt %d, want fp-crash attempt %d", d.Job.ID, d.Attempt, attempt)
		}
		if got, want := d.LastAttempt(), attempt == 3; got != want {
			t.Fatalf("attempt %d: LastAttempt = %v", attempt, got)
		}
	}
	expectNone(t, q, 2*time.Second)
}

func TestNakRedelivers(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{AckWait: time.Minute})
	enqueue(t, q, testJob("fp-nak"))
	d := next(t, q)
	if err := d.Nak(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if err := d.InProgress(context.Background()); !errors.Is(err, ErrSettled) {
		t.Fatalf("in progress after nak: %v, want ErrSettled", err)
	}
	d = next(t, q)
	if d.Attempt != 2 {
		t.Fatalf("after nak: attempt %d, want 2", d.Attempt)
	}
	start := time.Now()
	if err := d.Nak(context.Background(), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	d = next(t, q)
	if d.Attempt != 3 {
		t.Fatalf("after delayed nak: attempt %d, want 3", d.Attempt)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("delayed nak redelivered after %s, want about 300ms", waited)
	}
	if err := d.Ack(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitLag(t, q, 0)
}

func TestTermStopsRedelivery(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{AckWait: 300 * time.Millisecond, MaxDeliver: 5})
	enqueue(t, q, testJob("fp-term"))
	d := next(t, q)
	if err := d.Term(context.Background(), "repository opted out"); err != nil {
		t.Fatal(err)
	}
	if !d.Settled() {
		t.Fatal("terminated delivery is not settled")
	}
	waitLag(t, q, 0)
	expectNone(t, q, 1500*time.Millisecond)
}

func TestMalformedPayloadIsTerminated(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{AckWait: 300 * time.Millisecond, MaxDeliver: 5})
	ctx := context.Background()
	invalid, err := job.Job{ID: "fp-norepo"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range [][]byte{[]byte("{not json"), invalid} {
		if _, err := s.js.Publish(ctx, DefaultSubject, payload); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(t, q, testJob("fp-good"))

	d := next(t, q)
	if d.Job.ID != "fp-good" || d.Attempt != 1 {
		t.Fatalf("delivery: job %q attempt %d, want fp-good attempt 1", d.Job.ID, d.Attempt)
	}
	if got := q.Malformed(); got != 2 {
		t.Fatalf("malformed = %d, want 2", got)
	}
	if err := d.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	waitLag(t, q, 0)
	// Several AckWaits later, nothing came back: a redelivered malformed
	// message would have been terminated again and counted.
	expectNone(t, q, 1500*time.Millisecond)
	if got := q.Malformed(); got != 2 {
		t.Fatalf("malformed = %d after waiting, want 2 (a malformed message was redelivered)", got)
	}
}

func TestKeepAlivePreventsRedelivery(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{AckWait: 500 * time.Millisecond, MaxDeliver: 5})
	enqueue(t, q, testJob("fp-long"))
	d := next(t, q)
	stop := d.KeepAlive(context.Background(), 100*time.Millisecond)
	// Four AckWaits pass while the job runs: no other worker gets it.
	expectNone(t, q, 2*time.Second)
	stop()
	stop() // stop twice is harmless
	if err := d.Ack(context.Background()); err != nil {
		t.Fatalf("ack after a long job: %v", err)
	}
	waitLag(t, q, 0)
}

func TestKeepAliveStopsWithoutHeartbeatsItRedelivers(t *testing.T) {
	// The control for TestKeepAlivePreventsRedelivery: once heartbeats stop,
	// the job goes to another worker.
	s := startServer(t, t.TempDir())
	q := s.open(Config{AckWait: 500 * time.Millisecond, MaxDeliver: 5})
	enqueue(t, q, testJob("fp-stopped"))
	d := next(t, q)
	if err := d.InProgress(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop := d.KeepAlive(context.Background(), 100*time.Millisecond)
	stop()
	d2 := next(t, q)
	if d2.Job.ID != "fp-stopped" || d2.Attempt != 2 {
		t.Fatalf("redelivery: job %q attempt %d", d2.Job.ID, d2.Attempt)
	}
}

func TestJobsSurviveServerRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	q := s.open(Config{})
	enqueue(t, q, testJob("fp-a"))
	enqueue(t, q, testJob("fp-b"))
	d := next(t, q)
	if err := d.Ack(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitLag(t, q, 1)
	if !enqueue(t, q, testJob("fp-a")) {
		t.Fatal("a finished job's ID was not reported as a duplicate within the window")
	}
	s.stop()

	s = startServer(t, dir)
	q = s.open(Config{})
	waitLag(t, q, 1)
	d = next(t, q)
	if d.Job.ID != "fp-b" || d.Attempt != 1 {
		t.Fatalf("after restart: job %q attempt %d, want fp-b attempt 1", d.Job.ID, d.Attempt)
	}
	// The dedup window is rebuilt from the messages the stream still holds:
	// a job still queued stays deduplicated across a restart, a finished
	// (acked, so deleted) one does not. Callers guard against repeats with
	// the store's group claims, not with the queue alone.
	if !enqueue(t, q, testJob("fp-b")) {
		t.Fatal("queued job ID seen before the restart was not reported as a duplicate")
	}
	if err := d.Ack(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitLag(t, q, 0)
}

func TestConsume(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{AckWait: 5 * time.Second, RetryDelay: 50 * time.Millisecond})
	const n = 6
	for i := range n {
		enqueue(t, q, testJob(fmt.Sprintf("fp-%d", i)))
	}

	var (
		mu       sync.Mutex
		acked    = map[string]int{} // job ID → attempt that acked it
		running  int
		maxSlots int
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- q.Consume(ctx, 3, func(ctx context.Context, d *Delivery) {
			mu.Lock()
			running++
			maxSlots = max(maxSlots, running)
			mu.Unlock()
			defer func() {
				mu.Lock()
				running--
				mu.Unlock()
			}()
			switch {
			case d.Job.ID == "fp-1" && d.Attempt == 1:
				panic("bug in the handler")
			case d.Job.ID == "fp-2" && d.Attempt == 1:
				return // left unsettled: Consume naks it
			}
			if err := d.Ack(ctx); err != nil {
				t.Errorf("ack %s: %v", d.Job.ID, err)
				return
			}
			mu.Lock()
			acked[d.Job.ID] = d.Attempt
			mu.Unlock()
		})
	}()

	var got int
	testsvc.PollSeeing(t, time.Minute, fmt.Sprintf("all %d jobs acked", n), func() string { return fmt.Sprintf("%d of %d jobs acked", got, n) }, func() bool {
		mu.Lock()
		got = len(acked)
		mu.Unlock()
		return got == n
	})
	cancel()
	if err := testsvc.Receive(t, 30*time.Second, "Consume returns after its context was cancelled", done); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if acked["fp-1"] != 2 || acked["fp-2"] != 2 || acked["fp-0"] != 1 {
		t.Fatalf("acked attempts %v: want fp-1 and fp-2 on attempt 2, the rest on 1", acked)
	}
	if maxSlots > 3 {
		t.Fatalf("%d handlers ran at once with 3 slots", maxSlots)
	}
	waitLag(t, q, 0)
}

func TestConsumeArguments(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{})
	if err := q.Consume(context.Background(), 0, func(context.Context, *Delivery) {}); err == nil {
		t.Fatal("Consume with 0 slots did not fail")
	}
	if err := q.Consume(context.Background(), 1, nil); err == nil {
		t.Fatal("Consume without a handler did not fail")
	}
}

func TestNextReturnsWhenContextEnds(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := q.Next(ctx)
		errc <- err
	}()
	cancel()
	if err := testsvc.Receive(t, 30*time.Second, "Next returns after its context was cancelled", errc); !errors.Is(err, context.Canceled) {
		t.Fatalf("next after cancel: %v, want context.Canceled", err)
	}
	// A cancelled pull request does not swallow the next job.
	enqueue(t, q, testJob("fp-after"))
	if d := next(t, q); d.Attempt != 1 {
		t.Fatalf("job after a cancelled Next: attempt %d, want 1", d.Attempt)
	}
}

func TestOpenIsIdempotentAndValidates(t *testing.T) {
	s := startServer(t, t.TempDir())
	q := s.open(Config{Stream: "JOBS", Subject: "jobs.x", Consumer: "w", MaxDeliver: 4})
	q2 := s.open(Config{Stream: "JOBS", Subject: "jobs.x", Consumer: "w", MaxDeliver: 4})
	if got := q2.Config(); got.AckWait != DefaultAckWait || got.MaxDeliver != 4 || got.Storage != jetstream.FileStorage {
		t.Fatalf("config with defaults: %+v", got)
	}
	enqueue(t, q, testJob("fp-x"))
	if d := next(t, q2); d.Job.ID != "fp-x" || d.MaxDeliver != 4 {
		t.Fatalf("delivery through a second Open: %q max deliver %d", d.Job.ID, d.MaxDeliver)
	}
	if _, err := Open(context.Background(), s.js, Config{MaxDeliver: -1}, nil); err == nil {
		t.Fatal("Open with MaxDeliver -1 did not fail")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" means valid
	}{
		{"defaults", Config{}, ""},
		{"backoff", Config{MaxDeliver: 3, Backoff: []time.Duration{time.Second, time.Minute}}, ""},
		{"stream with dot", Config{Stream: "A.B"}, "stream name"},
		{"wildcard subject", Config{Subject: "jobs.*"}, "subject"},
		{"unbounded redelivery", Config{MaxDeliver: -1}, "max deliver"},
		{"negative ack wait", Config{AckWait: -time.Second}, "ack wait"},
		{"backoff too long", Config{MaxDeliver: 2, Backoff: []time.Duration{1, 2, 3}}, "backoff has 3"},
		{"zero backoff", Config{Backoff: []time.Duration{0}}, "backoff[0]"},
		{"tiny fetch wait", Config{FetchWait: time.Millisecond}, "fetch wait"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.WithDefaults().Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid config rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
