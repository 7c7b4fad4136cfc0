package worker_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config/logtest"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
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
			if err := testsvc.Receive(t, 30*time.Second, "consumer Run returns after its context was cancelled", done); err != nil {
				t.Errorf("consumer Run: %v", err)
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

// waitStatus waits for the task to reach st and returns it.
func waitStatus(t *testing.T, r *rig, id string, st task.Status) task.Task {
	t.Helper()
	var last task.Task
	testsvc.PollSeeing(t, 90*time.Second, fmt.Sprintf("task %s is %q", id, st), func() string { return fmt.Sprintf("task %s is %q (%s)", id, last.Status, last.Reason) }, func() bool {
		last = status(t, r, id)
		return last.Status == st
	})
	return last
}

func TestConsumerPublishesAndAcks(t *testing.T) {
	t.Parallel()
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
	testsvc.Poll(t, time.Minute, "the job's metrics", func() bool {
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
	testsvc.Poll(t, 30*time.Second, "the job leaves the queue", func() bool { return lag(t, q) == 0 })
	testsvc.Holds(t, 3*q.Config().AckWait, "one delivery of an acked job", func() bool { return len(jobs.seen()) == 1 })
	if a := jobs.seen(); a[0] != 1 {
		t.Fatalf("attempts %v, want [1]", a)
	}
}

// A job that no retry can mend (its repository is gone) is parked once,
// with the reason, and not delivered again: `bot replay` can bring it back.
func TestConsumerParksPermanentFailure(t *testing.T) {
	t.Parallel()
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
	testsvc.Poll(t, 30*time.Second, "the parked job leaves the queue", func() bool { return lag(t, q) == 0 })
	testsvc.Poll(t, 30*time.Second, "the job is parked", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, err := q.Stream().ParkedCount(ctx)
		return err == nil && n == 1
	})
	testsvc.Holds(t, 4*q.Config().AckWait, "one delivery of a parked job", func() bool {
		return len(jobs.seen()) == 1 && lag(t, q) == 0
	})
	if agent.called.Load() {
		t.Fatal("the agent ran without a repository")
	}
}

func TestConsumerRetriesTransientFailure(t *testing.T) {
	t.Parallel()
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: 500 * time.Millisecond, MaxDeliver: 2})
	tk := demoTask(s, "fp-transient")
	enqueue(t, q, tk)
	r := newRig(t, scriptedAgent{err: errors.New("model API: 503 Service Unavailable")})
	jobs := &recordingJobs{q: q}
	startConsumer(t, consumer(t, jobs, r))

	testsvc.Poll(t, 30*time.Second, "the failing attempt is recorded", func() bool {
		st := status(t, r, tk.ID)
		return st.Status == task.StatusQueued && strings.Contains(st.Reason, "retrying")
	})
	got := status(t, r, tk.ID)
	if !strings.Contains(got.Reason, "attempt 1 failed") || !strings.Contains(got.Reason, "503") {
		t.Fatalf("reason %q, want attempt 1's error and the retry", got.Reason)
	}
	// The job is held back for the retry delay, not redelivered after
	// AckWait nor dropped.
	testsvc.Holds(t, 4*q.Config().AckWait, "the job waits on the queue for its retry", func() bool {
		return len(jobs.seen()) == 1 && lag(t, q) == 1
	})
}

// A consumer handling a retried job writes JSON log lines that name each
// key once (a log shipper refuses a line with a key twice).
func TestConsumerLogsEachKeyOnce(t *testing.T) {
	t.Parallel()
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
	testsvc.Poll(t, 30*time.Second, "the failing attempt is recorded", func() bool {
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
	t.Parallel()
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
	testsvc.Poll(t, 30*time.Second, "the failed job leaves the queue", func() bool { return lag(t, q) == 0 })
	testsvc.Holds(t, 4*q.Config().AckWait, "one delivery of a job that failed for good", func() bool {
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
