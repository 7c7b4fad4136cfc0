package worker_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// A worker stopped mid-job (a pod scaled in or evicted) hands the job back
// with a Nak at once: another worker takes it long before the ack wait
// would have brought it back, as its next attempt.
func TestConsumerShutdownRedeliversJob(t *testing.T) {
	t.Parallel()
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
	testsvc.Receive(t, time.Minute, "the first worker's agent starts", blocked.started)
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
	testsvc.Poll(t, time.Minute, "the job is redelivered", func() bool { return len(jobs.seen()) > 0 })
	waitStatus(t, r2, tk.ID, task.StatusPublished)
	if a := jobs.seen(); len(a) != 1 || a[0] != 2 {
		t.Fatalf("second worker's attempts %v, want [2]", a)
	}
	testsvc.Poll(t, 30*time.Second, "the job leaves the queue", func() bool { return lag(t, q) == 0 })
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
	t.Parallel()
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
	testsvc.Receive(t, time.Minute, "the stuck agent starts", stuck.started)
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
	testsvc.Receive(t, time.Minute, "the consumer's Wait returns after the stuck job ended", waited)
	if !stuckJobs.returned.Load() {
		t.Error("the consumer's Wait returned before the consume loop it left behind")
	}
	handled := make(chan struct{})
	go func() { stuckJobs.handling.Wait(); close(handled) }()
	testsvc.Receive(t, time.Minute, "the released handler returns", handled)
}

func TestConsumerTakesOverAbandonedJob(t *testing.T) {
	t.Parallel()
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
	testsvc.Poll(t, 30*time.Second, "the job leaves the queue", func() bool { return lag(t, q) == 0 })
}

// A worker whose store (a real redis-server) goes away pulls no job until
// it is back: no job fails meanwhile, and the job queued while it was down
// is repaired on its first attempt once it is.
func TestConsumerPausesWhileTheStoreIsDown(t *testing.T) {
	t.Parallel()
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
	testsvc.Poll(t, 30*time.Second, "the worker asks whether its store answers", func() bool { return asked.Load() > 0 })

	srv.Stop()
	testsvc.Poll(t, 30*time.Second, "the worker notices its store is down", func() bool { return refused.Load() > 0 })
	tk := demoTask(s, "fp-store-down")
	enqueue(t, q, tk)
	after := refused.Load()
	// The worker asks again, and is refused, after the job is queued: had
	// it pulled, it would have had the job.
	testsvc.Poll(t, time.Minute, "the paused worker asks again, and is refused, three more times", func() bool { return refused.Load() >= after+3 })
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
