package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config/logtest"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
	"github.com/redfix/redfix/pkg/workspace"
)

// openQueue runs an in-process NATS server with JetStream on a file store
// and opens the job queue on it.
func openQueue(t *testing.T, cfg queue.Config) *queue.Queue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := embeddedtest.JetStream(t)
	if cfg.FetchWait == 0 {
		cfg.FetchWait = 200 * time.Millisecond // quick shutdowns
	}
	q, err := queue.Open(ctx, js, cfg, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func enqueue(t *testing.T, q *queue.Queue, tk task.Task) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if dup, err := q.Enqueue(ctx, job.New(tk)); err != nil || dup {
		t.Fatalf("enqueue %s: duplicate %v, %v", tk.ID, dup, err)
	}
}

// recordingJobs is the real queue, with each delivery's attempt recorded
// before the consumer handles it.
type recordingJobs struct {
	q        *queue.Queue
	mu       sync.Mutex
	attempts []int
	// handling counts the handlers running, even after Consume returned.
	handling sync.WaitGroup
	// returned says Consume returned.
	returned atomic.Bool
}

func (r *recordingJobs) Consume(ctx context.Context, slots int, handle queue.Handler, opts ...stream.ConsumeOption) error {
	defer r.returned.Store(true)
	return r.q.Consume(ctx, slots, func(ctx context.Context, d *queue.Delivery) {
		r.handling.Add(1)
		defer r.handling.Done()
		r.mu.Lock()
		r.attempts = append(r.attempts, d.Attempt)
		r.mu.Unlock()
		handle(ctx, d)
	}, opts...)
}

func (r *recordingJobs) seen() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.attempts...)
}

// startConsumer runs c until the returned stop is called (or the test
// ends); stop waits for Run to return.
func startConsumer(t *testing.T, c *worker.Consumer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("consumer Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("consumer Run did not return after its context was cancelled")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func consumer(t *testing.T, jobs worker.Jobs, r *rig) *worker.Consumer {
	return &worker.Consumer{
		Jobs:       jobs,
		Pipeline:   r.pipeline,
		Tasks:      r.store,
		Slots:      1,
		JobTimeout: 5 * time.Minute,
		Log:        zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)),
	}
}

func lag(t *testing.T, q *queue.Queue) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := q.Lag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func status(t *testing.T, r *rig, id string) task.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tk, err := r.store.GetTask(ctx, id)
	if err != nil {
		return task.Task{}
	}
	return tk
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		<-tick.C
	}
}

// waitStatus waits for the task to reach st and returns it.
func waitStatus(t *testing.T, r *rig, id string, st task.Status) task.Task {
	t.Helper()
	var last task.Task
	deadline := time.Now().Add(90 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		last = status(t, r, id)
		if last.Status == st {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %q (%s), want %q", id, last.Status, last.Reason, st)
		}
		<-tick.C
	}
}

// holdsFor checks cond every poll until d has passed.
func holdsFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
		<-tick.C
	}
}

func TestConsumerPublishesAndAcks(t *testing.T) {
	s := sample(t)
	// The gates run longer than AckWait: only the heartbeats keep the job
	// from being handed out again.
	q := openQueue(t, queue.Config{AckWait: 500 * time.Millisecond, MaxDeliver: 3})
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	tk := demoTask(s, "fp-consumed")
	enqueue(t, q, tk)
	jobs := &recordingJobs{q: q}
	c := consumer(t, jobs, r)
	c.Slots = 2 // an idle slot would take the job if its heartbeats stopped
	reg := prometheus.NewRegistry()
	c.Metrics = worker.NewMetrics(reg)
	startConsumer(t, c)

	got := waitStatus(t, r, tk.ID, task.StatusPublished)
	waitFor(t, time.Minute, "the job's metrics", func() bool {
		return counterValue(t, reg, "redfix_jobs_total", "published") == 1
	})
	if h := histogramOf(t, reg, "redfix_job_agent_steps"); h.GetSampleCount() != 1 || h.GetSampleSum() < 1 {
		t.Errorf("agent steps per job: %d samples, sum %v; want one repair with its steps", h.GetSampleCount(), h.GetSampleSum())
	}
	if h := histogramOf(t, reg, "redfix_job_llm_tokens"); h.GetSampleCount() != 1 {
		t.Errorf("tokens per job: %d samples, want 1", h.GetSampleCount())
	}
	if got.PullRequest == "" || len(r.pullRequests(t)) != 1 {
		t.Fatalf("published task %+v; pull requests %v", got, r.pullRequests(t))
	}
	waitFor(t, 10*time.Second, "the job is still on the queue", func() bool { return lag(t, q) == 0 })
	holdsFor(t, 3*q.Config().AckWait, "one delivery of an acked job", func() bool { return len(jobs.seen()) == 1 })
	if a := jobs.seen(); a[0] != 1 {
		t.Fatalf("attempts %v, want [1]", a)
	}
}

// A worker stopped mid-job (a pod scaled in or evicted) hands the job back
// with a Nak at once: another worker takes it long before the ack wait
// would have brought it back, as its next attempt.
func TestConsumerShutdownRedeliversJob(t *testing.T) {
	s := sample(t)
	// An ack wait far longer than the test waits: only the Nak can bring
	// the job back in time.
	q := openQueue(t, queue.Config{AckWait: time.Hour, MaxDeliver: 3})
	tk := demoTask(s, "fp-shutdown")
	enqueue(t, q, tk)

	// The first worker's agent is still running when the worker stops.
	blocked := scriptedAgent{block: true, started: make(chan struct{}), once: new(sync.Once)}
	r1 := newRig(t, blocked)
	stop := startConsumer(t, consumer(t, q, r1))
	select {
	case <-blocked.started:
	case <-time.After(time.Minute):
		t.Fatal("the first worker's agent never started")
	}
	if st := status(t, r1, tk.ID); st.Status != task.StatusRunning || st.Reason != "attempt 1" {
		t.Fatalf("while the agent runs: %s %q, want running, attempt 1", st.Status, st.Reason)
	}
	stop()
	if st := status(t, r1, tk.ID); st.Status != task.StatusQueued || !strings.Contains(st.Reason, "shutdown") {
		t.Fatalf("after the shutdown: %s %q, want queued after a shutdown", st.Status, st.Reason)
	}
	if n := r1.publisher.calls.Load(); n != 0 {
		t.Fatalf("the interrupted worker published %d times", n)
	}

	// The job comes back at once, not after the hour's ack wait, to a
	// second worker (sharing the first's store and publisher).
	r2 := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	r2.pipeline.Ledger, r2.store = r1.store, r1.store
	jobs := &recordingJobs{q: q}
	startConsumer(t, consumer(t, jobs, r2))
	waitFor(t, time.Minute, "the job was not redelivered", func() bool { return len(jobs.seen()) > 0 })
	waitStatus(t, r2, tk.ID, task.StatusPublished)
	if a := jobs.seen(); len(a) != 1 || a[0] != 2 {
		t.Fatalf("second worker's attempts %v, want [2]", a)
	}
	waitFor(t, 10*time.Second, "the job is still on the queue", func() bool { return lag(t, q) == 0 })
}

// stuckAgent ignores cancellation until released: a repair that does not
// stop when its worker does.
type stuckAgent struct {
	started, release chan struct{}
	once             *sync.Once
}

func (a stuckAgent) Run(ctx context.Context, ws *workspace.Workspace, t task.Task, traj io.Writer) (harness.Result, error) {
	a.once.Do(func() { close(a.started) })
	<-a.release
	return harness.Result{}, errors.New("released")
}

// A stopping worker waits for its jobs to be handed back no longer than
// its drain timeout; a job that does not stop is left to the queue, which
// gives it to another worker once the ack wait passes without heartbeats.
func TestConsumerDrainTimeoutLeavesStuckJobToQueue(t *testing.T) {
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: time.Second, MaxDeliver: 3})
	tk := demoTask(s, "fp-stuck")
	enqueue(t, q, tk)

	stuck := stuckAgent{started: make(chan struct{}), release: make(chan struct{}), once: new(sync.Once)}
	r1 := newRig(t, stuck)
	stuckJobs := &recordingJobs{q: q}
	c1 := consumer(t, stuckJobs, r1)
	c1.DrainTimeout = 100 * time.Millisecond
	c1.Heartbeat = 200 * time.Millisecond
	stop := startConsumer(t, c1)
	select {
	case <-stuck.started:
	case <-time.After(time.Minute):
		t.Fatal("the stuck agent never started")
	}
	stop() // fails the test unless Run returns while the agent is stuck

	r2 := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	jobs := &recordingJobs{q: q}
	startConsumer(t, consumer(t, jobs, r2))
	waitStatus(t, r2, tk.ID, task.StatusPublished)
	if a := jobs.seen(); len(a) != 1 || a[0] != 2 {
		t.Fatalf("second worker's attempts %v, want [2]", a)
	}

	// The stuck repair ends; the consumer that left it behind waits for
	// its consume loop, and its handler finishes before the test does.
	close(stuck.release)
	waited := make(chan struct{})
	go func() { c1.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(time.Minute):
		t.Fatal("the consumer's Wait did not return after the stuck job ended")
	}
	if !stuckJobs.returned.Load() {
		t.Error("the consumer's Wait returned before the consume loop it left behind")
	}
	handled := make(chan struct{})
	go func() { stuckJobs.handling.Wait(); close(handled) }()
	select {
	case <-handled:
	case <-time.After(time.Minute):
		t.Fatal("the released handler did not return")
	}
}

func TestConsumerTakesOverAbandonedJob(t *testing.T) {
	// A worker that dies holding a job settles nothing and sends no
	// heartbeat: the job goes to another worker once AckWait passes.
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: time.Second, MaxDeliver: 3})
	tk := demoTask(s, "fp-abandoned")
	enqueue(t, q, tk)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := q.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Job.ID != tk.Fingerprint || d.Attempt != 1 {
		t.Fatalf("first delivery %s attempt %d", d.Job.ID, d.Attempt)
	}
	// d is dropped: its worker is gone.

	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	jobs := &recordingJobs{q: q}
	startConsumer(t, consumer(t, jobs, r))
	waitStatus(t, r, tk.ID, task.StatusPublished)
	if a := jobs.seen(); len(a) != 1 || a[0] != 2 {
		t.Fatalf("attempts %v, want [2]", a)
	}
	waitFor(t, 10*time.Second, "the job is still on the queue", func() bool { return lag(t, q) == 0 })
}

// A job that no retry can mend (its repository is gone) is parked once,
// with the reason, and not delivered again: `bot replay` can bring it back.
func TestConsumerParksPermanentFailure(t *testing.T) {
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: 500 * time.Millisecond, MaxDeliver: 5})
	tk := demoTask(s, "fp-no-repo")
	tk.Repo = filepath.Join(t.TempDir(), "deleted")
	enqueue(t, q, tk)
	agent := &calledAgent{}
	r := newRig(t, agent)
	jobs := &recordingJobs{q: q}
	startConsumer(t, consumer(t, jobs, r))

	got := waitStatus(t, r, tk.ID, task.StatusFailed)
	if !strings.Contains(got.Reason, "deleted") || !strings.Contains(got.Reason, "no such repository") {
		t.Fatalf("reason %q, want the permanent failure naming the repository", got.Reason)
	}
	waitFor(t, 10*time.Second, "the parked job is still on the queue", func() bool { return lag(t, q) == 0 })
	waitFor(t, 30*time.Second, "the job is parked", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, err := q.Stream().ParkedCount(ctx)
		return err == nil && n == 1
	})
	holdsFor(t, 4*q.Config().AckWait, "one delivery of a parked job", func() bool {
		return len(jobs.seen()) == 1 && lag(t, q) == 0
	})
	if agent.called.Load() {
		t.Fatal("the agent ran without a repository")
	}
}

func TestConsumerRetriesTransientFailure(t *testing.T) {
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: 500 * time.Millisecond, MaxDeliver: 2})
	tk := demoTask(s, "fp-transient")
	enqueue(t, q, tk)
	r := newRig(t, scriptedAgent{err: errors.New("model API: 503 Service Unavailable")})
	jobs := &recordingJobs{q: q}
	startConsumer(t, consumer(t, jobs, r))

	waitFor(t, 30*time.Second, "the failing attempt was not recorded", func() bool {
		st := status(t, r, tk.ID)
		return st.Status == task.StatusQueued && strings.Contains(st.Reason, "retrying")
	})
	got := status(t, r, tk.ID)
	if !strings.Contains(got.Reason, "attempt 1 failed") || !strings.Contains(got.Reason, "503") {
		t.Fatalf("reason %q, want attempt 1's error and the retry", got.Reason)
	}
	// The job is held back for the retry delay, not redelivered after
	// AckWait nor dropped.
	holdsFor(t, 4*q.Config().AckWait, "the job waits on the queue for its retry", func() bool {
		return len(jobs.seen()) == 1 && lag(t, q) == 1
	})
}

// A consumer handling a retried job writes JSON log lines that name each
// key once (a log shipper refuses a line with a key twice).
func TestConsumerLogsEachKeyOnce(t *testing.T) {
	s := sample(t)
	log, buf := logtest.JSON(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, embeddedtest.JetStream(t), queue.Config{AckWait: 500 * time.Millisecond, MaxDeliver: 2, FetchWait: 200 * time.Millisecond}, log)
	if err != nil {
		t.Fatal(err)
	}
	tk := demoTask(s, "fp-logged")
	enqueue(t, q, tk)
	r := newRig(t, scriptedAgent{err: errors.New("model API: 503 Service Unavailable")})
	r.pipeline.Log = log
	c := consumer(t, q, r)
	c.Log = log
	stop := startConsumer(t, c)
	waitFor(t, 30*time.Second, "the failing attempt was not recorded", func() bool {
		st := status(t, r, tk.ID)
		return st.Status == task.StatusQueued && strings.Contains(st.Reason, "retrying")
	})
	stop()
	_ = log.Sync()

	var retried bool
	for _, l := range logtest.Lines(t, buf.Bytes()) {
		if l["msg"] == "job failed; will retry" {
			retried = true
			if l["attempt"] != float64(1) || l["task_id"] != tk.ID {
				t.Errorf("the retry's line: attempt %v, task %v; want 1, %s", l["attempt"], l["task_id"], tk.ID)
			}
		}
	}
	if !retried {
		t.Fatalf("no retry logged:\n%s", buf.Bytes())
	}
}

func TestConsumerFailsTransientFailureOnLastAttempt(t *testing.T) {
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: 500 * time.Millisecond, MaxDeliver: 1})
	tk := demoTask(s, "fp-last")
	enqueue(t, q, tk)
	r := newRig(t, scriptedAgent{err: errors.New("model API: 503 Service Unavailable")})
	jobs := &recordingJobs{q: q}
	startConsumer(t, consumer(t, jobs, r))

	got := waitStatus(t, r, tk.ID, task.StatusFailed)
	if !strings.Contains(got.Reason, "gave up after 1 attempts") || !strings.Contains(got.Reason, "503") {
		t.Fatalf("reason %q, want giving up with the last error", got.Reason)
	}
	waitFor(t, 10*time.Second, "the failed job is still on the queue", func() bool { return lag(t, q) == 0 })
	holdsFor(t, 4*q.Config().AckWait, "one delivery of a job that failed for good", func() bool {
		return len(jobs.seen()) == 1
	})
}

// counterValue is the value of a counter vector's series with the one
// label value.
func counterValue(t *testing.T, reg *prometheus.Registry, name, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func histogramOf(t *testing.T, reg *prometheus.Registry, name string) *dto.Histogram {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	t.Fatalf("no histogram %s", name)
	return nil
}

// A worker whose store (a real redis-server) goes away pulls no job until
// it is back: no job fails meanwhile, and the job queued while it was down
// is repaired on its first attempt once it is.
func TestConsumerPausesWhileTheStoreIsDown(t *testing.T) {
	s := sample(t)
	srv := testsvc.StartRedis(t, "worker-pass")
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	st := store.New(rdb, "")
	q := openQueue(t, queue.Config{AckWait: 5 * time.Second, MaxDeliver: 3})
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	r.store, r.pipeline.Ledger = st, st
	jobs := &recordingJobs{q: q}
	c := consumer(t, jobs, r)
	var asked, refused atomic.Int64
	c.Ready = func(ctx context.Context) error {
		asked.Add(1)
		err := st.Ready(ctx)
		if err != nil {
			refused.Add(1)
		}
		return err
	}
	startConsumer(t, c)
	waitFor(t, 30*time.Second, "the worker never asked whether its store answers", func() bool { return asked.Load() > 0 })

	srv.Stop()
	waitFor(t, 30*time.Second, "the worker did not notice its store is down", func() bool { return refused.Load() > 0 })
	tk := demoTask(s, "fp-store-down")
	enqueue(t, q, tk)
	after := refused.Load()
	// The worker asks again, and is refused, after the job is queued: had
	// it pulled, it would have had the job.
	waitFor(t, time.Minute, "the paused worker did not ask again", func() bool { return refused.Load() >= after+3 })
	if a := jobs.seen(); len(a) != 0 {
		t.Fatalf("the worker pulled jobs %v while its store was down", a)
	}
	if n := lag(t, q); n != 1 {
		t.Fatalf("lag %d, want the job waiting", n)
	}

	srv.Start()
	waitStatus(t, r, tk.ID, task.StatusPublished)
	if a := jobs.seen(); len(a) != 1 || a[0] != 1 {
		t.Fatalf("attempts %v, want [1]: the outage must not use up deliveries", a)
	}
}

// outcomeLog is a RepairRecorder that keeps what it is told.
type outcomeLog struct {
	mu       sync.Mutex
	outcomes []worker.Outcome
}

func (l *outcomeLog) RecordRepair(_ context.Context, _ task.Task, out worker.Outcome) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outcomes = append(l.outcomes, out)
	return nil
}

func (l *outcomeLog) all() []worker.Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]worker.Outcome(nil), l.outcomes...)
}

// rejections is the expected redfix_gate_rejections_total, each gate with
// n[gate] (0 when absent).
func rejections(n map[string]int) string {
	var b strings.Builder
	b.WriteString("# HELP redfix_gate_rejections_total Rounds a gate rejected, by gate: every round (first episode and feedback rounds) of every candidate, once per job however often it is delivered; a round rejected by two gates counts for both.\n# TYPE redfix_gate_rejections_total counter\n")
	for _, g := range []string{"integrity", "judge", "oracle", "regression", "revert", "static"} {
		fmt.Fprintf(&b, "redfix_gate_rejections_total{gate=%q} %d\n", g, n[g])
	}
	return b.String()
}

// A job whose feedback round fails after a rejection settles with every
// round on its task (gates, patch, trajectory, the attempt that ran it), a
// reason that tells both rounds, and the round-1 rejection counted.
func TestConsumerRecordsEveryRound(t *testing.T) {
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: 5 * time.Second, MaxDeliver: 3})
	r := newRig(t, secondGuessAgent{})
	r.pipeline.FeedbackRounds = 1
	tk := demoTask(s, "fp-rounds")
	enqueue(t, q, tk)
	c := consumer(t, q, r)
	reg := prometheus.NewRegistry()
	c.Metrics = worker.NewMetrics(reg)
	c.Once = r.store
	var rec outcomeLog
	c.Record = &rec
	startConsumer(t, c)

	got := waitStatus(t, r, tk.ID, task.StatusNoPatch)
	if !strings.HasPrefix(got.Reason, "round 1 rejected by regression: ") || !strings.HasSuffix(got.Reason, "; round 2: the agent's last change does not pass the failing tests") {
		t.Errorf("the task's reason %q does not tell both rounds", got.Reason)
	}
	if len(got.Rounds) != 2 {
		t.Fatalf("the task's rounds: %+v, want 2", got.Rounds)
	}
	for i, want := range []struct {
		verdict, gate, patch string
	}{{task.RoundRejected, "regression", "qty >= t.MinQty"}, {task.RoundTestsFail, "", "cart/cart.go"}} {
		r := got.Rounds[i]
		g, _ := gate(r.Gates, want.gate)
		if r.Attempt != 1 || r.N != i+1 || r.Verdict != want.verdict || (want.gate != "" && g.Verdict != task.GateFail) ||
			!strings.Contains(r.Patch, want.patch) || r.Trajectory == "" {
			t.Errorf("the task's round %d: %+v", i+1, r)
		}
	}
	waitFor(t, time.Minute, "the repair's outcome was not recorded", func() bool { return len(rec.all()) == 1 })
	if err := testutil.GatherAndCompare(reg, strings.NewReader(rejections(map[string]int{"regression": 1})), "redfix_gate_rejections_total"); err != nil {
		t.Error(err)
	}
	if out := rec.all()[0]; out.Rejections["regression"] != 1 || len(out.AllRounds) != 2 {
		t.Errorf("recorded rejections %v, rounds %d; want regression once, 2 rounds", out.Rejections, len(out.AllRounds))
	}
}

// Two deliveries of one job (the first worker's heartbeats stopped and the
// queue gave the job to a second worker while the first still ran it):
// both repair it, and its rejection is counted and recorded once.
func TestConsumerCountsARedeliveredJobOnce(t *testing.T) {
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: time.Second, MaxDeliver: 3})
	tk := demoTask(s, "fp-twice")
	enqueue(t, q, tk)
	reg := prometheus.NewRegistry()
	metrics := worker.NewMetrics(reg)
	var rec outcomeLog
	st := newStore(t)
	start := func(agent worker.Agent, heartbeat time.Duration) *recordingJobs {
		r := newRig(t, agent)
		r.pipeline.FeedbackRounds = 1
		r.store, r.pipeline.Ledger = st, st
		jobs := &recordingJobs{q: q}
		c := consumer(t, jobs, r)
		c.Metrics, c.Once, c.Record, c.Heartbeat = metrics, st, &rec, heartbeat
		startConsumer(t, c)
		return jobs
	}
	// The first worker sends no heartbeat in time, and its agent waits.
	held := secondGuessAgent{hold: make(chan struct{}), started: make(chan struct{}), once: new(sync.Once)}
	firstJobs := start(held, time.Hour)
	select {
	case <-held.started:
	case <-time.After(time.Minute):
		t.Fatal("the first worker's agent never started")
	}
	secondJobs := start(secondGuessAgent{}, 0)
	waitFor(t, time.Minute, "the second worker did not get the job", func() bool { return len(secondJobs.seen()) == 1 })
	waitFor(t, 2*time.Minute, "the second delivery's repair was not recorded", func() bool { return len(rec.all()) == 1 })
	if err := testutil.GatherAndCompare(reg, strings.NewReader(rejections(map[string]int{"regression": 1})), "redfix_gate_rejections_total"); err != nil {
		t.Error(err)
	}

	// The first worker's repair ends the same way, after the job settled.
	close(held.hold)
	waitFor(t, 2*time.Minute, "the first delivery did not end", func() bool {
		return counterValue(t, reg, "redfix_jobs_total", string(task.StatusNoPatch)) == 2
	})
	firstJobs.handling.Wait()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(rejections(map[string]int{"regression": 1})), "redfix_gate_rejections_total"); err != nil {
		t.Errorf("after both deliveries: %v", err)
	}
	if n := len(rec.all()); n != 1 {
		t.Errorf("the repair was recorded %d times, want once", n)
	}
	if h := histogramOf(t, reg, "redfix_job_agent_steps"); h.GetSampleCount() != 1 {
		t.Errorf("agent steps observed for %d repairs, want 1", h.GetSampleCount())
	}
	if got := status(t, &rig{store: st}, tk.ID); got.Status != task.StatusNoPatch || len(got.Rounds) != 2 {
		t.Errorf("task %s (%s) with %d rounds, want no_patch with 2", got.Status, got.Reason, len(got.Rounds))
	}
}
