package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
)

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
	t.Parallel()
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
	testsvc.Poll(t, time.Minute, "the repair's outcome is recorded", func() bool { return len(rec.all()) == 1 })
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
	t.Parallel()
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
	testsvc.Receive(t, time.Minute, "the first worker's agent starts", held.started)
	secondJobs := start(secondGuessAgent{}, 0)
	testsvc.Poll(t, time.Minute, "the second worker gets the job", func() bool { return len(secondJobs.seen()) == 1 })
	testsvc.Poll(t, 2*time.Minute, "the second delivery's repair is recorded", func() bool { return len(rec.all()) == 1 })
	if err := testutil.GatherAndCompare(reg, strings.NewReader(rejections(map[string]int{"regression": 1})), "redfix_gate_rejections_total"); err != nil {
		t.Error(err)
	}

	// The first worker's repair ends the same way, after the job settled.
	close(held.hold)
	testsvc.Poll(t, 2*time.Minute, "the first delivery ends", func() bool {
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

// Failures triage merged into a queued task after its job was queued
// (groups found to share its culprit) are repaired with it: the gates run
// them all and the pull request counts them all, not the job's one.
func TestConsumerRepairsTheFailuresMergedIntoTheTask(t *testing.T) {
	s := sample(t)
	q := openQueue(t, queue.Config{AckWait: 5 * time.Second, MaxDeliver: 3})
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	tk := demoTask(s, "fp-merged")
	enqueue(t, q, tk)
	ctx := context.Background()
	if err := r.store.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	more := []task.Failure{
		{Package: "example.com/shop/pricing", Test: "TestVolumeDiscount/between_tiers", Message: "Quote(widget, 20) = 20000, want 18000"},
		{Package: "example.com/shop/pricing", Test: "TestQuote", Message: "merged from a group with the same culprit"},
	}
	if err := r.store.AddFailures(ctx, tk.ID, more); err != nil {
		t.Fatal(err)
	}
	startConsumer(t, consumer(t, q, r))

	got := waitStatus(t, r, tk.ID, task.StatusPublished)
	prs := r.pullRequests(t)
	if len(prs) != 1 {
		t.Fatalf("pull requests %v (task %+v)", prs, got)
	}
	body, err := os.ReadFile(filepath.Join(r.prDir, prs[0], publish.FilePullRequest))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "redfix found 3 tests failing") || !strings.Contains(string(body), "TestVolumeDiscount/between_tiers") {
		t.Errorf("the pull request does not count the merged failures:\n%.600s", body)
	}
	oracle, _ := gate(got.Rounds[len(got.Rounds)-1].Gates, "oracle")
	if !strings.Contains(oracle.Detail, "TestQuote") {
		t.Errorf("the oracle did not run the merged failures: %q", oracle.Detail)
	}
}
