package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/validators"
)

// Jobs is the queue the consumer pulls from.
type Jobs interface {
	Consume(ctx context.Context, slots int, handle queue.Handler, opts ...stream.ConsumeOption) error
}

// Tasks records where each task stands.
type Tasks interface {
	SaveTask(ctx context.Context, t task.Task) error
}

// TaskSpends adds what a task's model calls spent to its record.
type TaskSpends interface {
	AddTaskSpend(ctx context.Context, id string, s task.Spend) error
}

// Consumer runs the pipeline on queued jobs, one per slot.
type Consumer struct {
	Jobs     Jobs
	Pipeline *Pipeline
	Tasks    Tasks
	// Spends, when set, records each attempt's model spend on its task.
	Spends TaskSpends
	Slots  int
	// Heartbeat is how often a running job tells the queue it is alive
	// (0: a third of the queue's ack wait).
	Heartbeat time.Duration
	// JobTimeout bounds one repair.
	JobTimeout time.Duration
	// DrainTimeout bounds how long Run waits, once its context ends, for
	// the jobs in flight to be handed back (0: as long as they take). A
	// job still running past it is left behind: its heartbeats have
	// stopped, so the queue redelivers it after its ack wait.
	DrainTimeout time.Duration
	Metrics      *Metrics
	// Record, when set, hears of every repair settled for good (published,
	// no patch, failed), for the history the dashboard draws, and of the
	// rounds the gates rejected in an attempt that is retried.
	Record RepairRecorder
	// Once, when set, makes what a job's delivery records (Record, and the
	// per-repair metrics) count once however often the job is delivered:
	// again after its ack was lost, or to a second worker while the first
	// still ran it. Without it every delivery counts.
	Once Once
	// Ready, when set, says whether what a job needs answers (the store):
	// while it does not, no job is pulled, and a job already held goes on
	// as usual.
	Ready func(context.Context) error
	Log   *zap.Logger

	// left is the consume loop Run leaves behind when the drain timeout
	// passes with jobs still running; Wait waits for it.
	left sync.WaitGroup
}

// RepairRecorder keeps what became of each repair. An outcome without a
// status did not settle its task (the job is retried): only the gates'
// rejections in its rounds count.
type RepairRecorder interface {
	RecordRepair(ctx context.Context, t task.Task, out Outcome) error
}

// Once remembers keys (store.Store).
type Once interface {
	// FirstTime remembers key for ttl and reports whether this is the
	// first time: false when key or any of unless is remembered already.
	FirstTime(ctx context.Context, key string, ttl time.Duration, unless ...string) (bool, error)
}

// onceTTL is how long a job's recorded outcome is remembered: far longer
// than a job stays on the queue.
const onceTTL = 30 * 24 * time.Hour

// first reports whether the delivery's outcome is to be counted: the first
// time key is seen and none of unless was. A store that does not answer
// costs a log line and counts.
func (c *Consumer) first(ctx context.Context, log *zap.Logger, key string, unless ...string) bool {
	if c.Once == nil {
		return true
	}
	ok, err := c.Once.FirstTime(ctx, key, onceTTL, unless...)
	if err != nil {
		log.Warn("check whether the job's outcome was recorded before; recording it", zap.Error(err))
		return true
	}
	if !ok {
		log.Info("the job's outcome was recorded by an earlier delivery: not counted again", zap.String("key", key))
	}
	return ok
}

func (c *Consumer) record(ctx context.Context, log *zap.Logger, t task.Task, out Outcome) {
	if c.Record == nil {
		return
	}
	if err := c.Record.RecordRepair(ctx, t, out); err != nil {
		log.Warn("record the repair's outcome for the dashboard", zap.Error(err))
	}
}

// Metrics are the consumer's Prometheus metrics.
type Metrics struct {
	jobs     *prometheus.CounterVec
	duration prometheus.Histogram
	spend    *spendMetrics
	// per repair that ran to its end: the agents' steps, tokens and cost;
	// and per round the gates rejected, each gate that did.
	steps, tokens, cost prometheus.Histogram
	rejections          *prometheus.CounterVec
}

// NewMetrics registers the consumer's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redfix_jobs_total",
			Help: "Repair jobs handled, by result (published, no_patch, failed, over_budget, retried, interrupted).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "redfix_job_duration_seconds",
			Help:    "Time from a job's delivery to its settlement.",
			Buckets: prometheus.ExponentialBuckets(5, 2, 10),
		}),
	}
	m.steps = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "redfix_job_agent_steps",
		Help:    "Agent steps one repair took, over every candidate and feedback round.",
		Buckets: []float64{1, 2, 5, 10, 15, 20, 30, 50, 75, 100, 150, 250},
	})
	m.tokens = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "redfix_job_llm_tokens",
		Help:    "Model tokens (input and output) one repair used, over every candidate.",
		Buckets: prometheus.ExponentialBuckets(1000, 2, 12),
	})
	m.cost = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "redfix_job_llm_cost_usd",
		Help:    "What one repair's model calls cost, in US dollars.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	})
	m.rejections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redfix_gate_rejections_total",
		Help: "Rounds a gate rejected, by gate: every round (first episode and feedback rounds) of every candidate, once per job however often it is delivered; a round rejected by two gates counts for both.",
	}, []string{"gate"})
	for _, r := range []string{string(task.StatusPublished), string(task.StatusNoPatch), string(task.StatusFailed), string(task.StatusOverBudget), "retried", "interrupted"} {
		m.jobs.WithLabelValues(r)
	}
	for _, g := range []string{validators.GateOracle, validators.GateRegression, validators.GateStatic, validators.GateRevert, validators.GateIntegrity, judge.GateName} {
		m.rejections.WithLabelValues(g)
	}
	reg.MustRegister(m.jobs, m.duration, m.steps, m.tokens, m.cost, m.rejections)
	m.spend = newSpendMetrics(reg)
	return m
}

// repaired records a repair that ran to its end.
func (m *Metrics) repaired(out Outcome) {
	if m == nil {
		return
	}
	m.steps.Observe(float64(out.Steps))
	m.tokens.Observe(float64(out.Spend.PromptTokens + out.Spend.CompletionTokens))
	m.cost.Observe(out.Spend.CostUSD)
	m.rejected(out)
}

// rejected counts the rounds the gates rejected.
func (m *Metrics) rejected(out Outcome) {
	if m == nil {
		return
	}
	for g, n := range out.Rejections {
		m.rejections.WithLabelValues(g).Add(float64(n))
	}
}

func (m *Metrics) observe(result string, d time.Duration) {
	if m == nil {
		return
	}
	m.jobs.WithLabelValues(result).Inc()
	m.duration.Observe(d.Seconds())
}

// Run consumes until ctx ends. A job running then is handed back to the
// queue at once (its repair is cancelled and the delivery nak'ed without
// delay, for another worker to start over); Run returns once every slot
// has handed its job back, or DrainTimeout after ctx ended. In the latter
// case the consume loop goes on until its last job returns: the Consumer
// owns it, and Wait waits for it.
func (c *Consumer) Run(ctx context.Context) error {
	slots := c.Slots
	if slots < 1 {
		slots = 1
	}
	var opts []stream.ConsumeOption
	if c.Ready != nil {
		opts = append(opts, stream.WhileReady(c.Ready))
	}
	if c.DrainTimeout <= 0 {
		return c.Jobs.Consume(ctx, slots, c.handle, opts...)
	}
	done := make(chan error, 1)
	c.left.Add(1)
	go func() {
		defer c.left.Done()
		done <- c.Jobs.Consume(ctx, slots, c.handle, opts...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(c.DrainTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		c.Log.Warn("jobs still running after the drain timeout: leaving them to the queue, which redelivers them after its ack wait",
			zap.Duration("drain_timeout", c.DrainTimeout))
		return nil
	}
}

// Wait waits until the jobs that Run left running at its drain timeout
// have returned (at once when it left none). A process that exits after
// Run need not call it: the queue redelivers those jobs.
func (c *Consumer) Wait() { c.left.Wait() }

func (c *Consumer) handle(ctx context.Context, d *queue.Delivery) {
	start := time.Now()
	t := d.Job.Task
	log := c.Log.With(zap.String("job_id", d.Job.ID), zap.String("task_id", t.ID), zap.String("repo", t.Repo), zap.Int("attempt", d.Attempt))
	stop := d.KeepAlive(ctx, c.Heartbeat)
	defer stop()

	c.save(ctx, log, t, task.StatusRunning, fmt.Sprintf("attempt %d", d.Attempt), "", nil)
	t = c.withMergedFailures(ctx, log, t)
	jobCtx := ctx
	if c.JobTimeout > 0 {
		var cancel context.CancelFunc
		jobCtx, cancel = context.WithTimeout(ctx, c.JobTimeout)
		defer cancel()
	}
	log.Info("job started")
	var (
		out Outcome
		err error
	)
	if rev := d.Job.Revision; rev != nil {
		out, err = c.Pipeline.Revise(jobCtx, t, *rev)
	} else {
		out, err = c.Pipeline.Repair(jobCtx, t)
	}
	stop()
	if c.Metrics != nil {
		c.Metrics.spend.add(out.Spend)
	}
	settle := context.WithoutCancel(ctx)
	if c.Spends != nil && out.Spend.Calls > 0 {
		if err := c.Spends.AddTaskSpend(settle, t.ID, out.TaskSpend(c.Pipeline.Model)); err != nil {
			log.Warn("record the task's spend", zap.Error(err))
		}
	}
	// What this delivery records counts once for the job's message
	// (settled), once for an attempt that did not settle it, and not at
	// all after the message settled.
	settled := fmt.Sprintf("repair:%s/%d", t.ID, d.StreamSeq)
	attempt := fmt.Sprintf("%s/%d", settled, d.Attempt)
	rounds := stamp(out.AllRounds, d.Attempt)
	// How the job's message is settled follows from the error's class, the
	// one way every stream consumer decides (stream.Delivery.Settlement);
	// the task's status is saved first, then the message settled.
	how := d.Settlement(ctx, err)
	switch how {
	case stream.SettledAck:
		c.save(settle, log, t, out.Status, out.Reason, out.PullRequest, rounds)
		c.Metrics.observe(string(out.Status), time.Since(start))
		if c.first(settle, log, settled) {
			c.Metrics.repaired(out)
			c.record(settle, log, t, out)
		}
		log.Info("job done", zap.String("status", string(out.Status)), zap.String("reason", out.Reason))
	case stream.SettledHandBack:
		// The worker is stopping: hand the job back at once, untouched.
		c.save(settle, log, t, task.StatusQueued, "interrupted by a worker shutdown; redelivered", "", rounds)
		c.Metrics.observe("interrupted", time.Since(start))
		c.unsettled(settle, log, t, out, attempt, settled)
		log.Info("job interrupted by shutdown")
	case stream.SettledPark:
		reason := err.Error()
		if !errors.Is(err, ErrPermanent) {
			reason = fmt.Sprintf("gave up after %d attempts: %v", d.Attempt, err)
		}
		c.save(settle, log, t, task.StatusFailed, reason, "", rounds)
		c.Metrics.observe(string(task.StatusFailed), time.Since(start))
		if c.first(settle, log, settled) {
			c.Metrics.rejected(out)
			c.record(settle, log, t, failed(out, reason))
		}
		log.Error("job failed for good; parked", zap.Error(err))
	case stream.SettledRetry:
		delay := d.RetryDelay()
		c.save(settle, log, t, task.StatusQueued, fmt.Sprintf("attempt %d failed, retrying in %s: %v", d.Attempt, delay, err), "", rounds)
		c.Metrics.observe("retried", time.Since(start))
		c.unsettled(settle, log, t, out, attempt, settled)
		log.Warn("job failed; will retry", zap.Duration("delay", delay), zap.Error(err))
	}
	if _, serr := d.Settle(ctx, err); serr != nil {
		log.Warn("settle job: it comes back after the ack wait", zap.String("settlement", how.String()), zap.Error(serr))
	}
}

// storedTasks reads a task as stored (store.Store): Tasks may.
type storedTasks interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
}

// withMergedFailures is t with the failures its stored copy holds beside
// the job's: triage adds to a queued task the failures of the groups found
// to share its culprit (store.AddFailures), after its job was queued. The
// repair, its gates and its pull request then answer for all of them.
func (c *Consumer) withMergedFailures(ctx context.Context, log *zap.Logger, t task.Task) task.Task {
	st, ok := c.Tasks.(storedTasks)
	if !ok {
		return t
	}
	stored, err := st.GetTask(ctx, t.ID)
	if err != nil {
		log.Warn("read the task's merged failures; repairing the job's", zap.Error(err))
		return t
	}
	if merged := task.MergeFailures(t.Failures, stored.Failures); len(merged) > len(t.Failures) {
		log.Info("failures merged into the task since its job was queued", zap.Int("failures", len(merged)), zap.Int("in_the_job", len(t.Failures)))
		t.Failures = merged
	}
	return t
}

// failed is the outcome recorded for a repair that failed: its model use
// and the rounds the gates rejected before it did.
func failed(out Outcome, reason string) Outcome {
	return Outcome{Status: task.StatusFailed, Reason: reason, Spend: out.Spend, AllRounds: out.AllRounds, Rejections: out.Rejections}
}

// unsettled counts the rejections of an attempt that did not settle its
// job (retried, or handed back at a shutdown): the rounds happened, and
// the attempt that settles the job brings its own.
func (c *Consumer) unsettled(ctx context.Context, log *zap.Logger, t task.Task, out Outcome, key, settled string) {
	if len(out.Rejections) == 0 || !c.first(ctx, log, key, settled) {
		return
	}
	c.Metrics.rejected(out)
	c.record(ctx, log, t, Outcome{AllRounds: out.AllRounds, Rejections: out.Rejections})
}

// stamp marks rounds with the delivery that ran them.
func stamp(rounds []task.Round, attempt int) []task.Round {
	if len(rounds) == 0 {
		return nil
	}
	out := append([]task.Round(nil), rounds...)
	for i := range out {
		out[i].Attempt = attempt
	}
	return out
}

// save records where the task stands; rounds, when there are any, replace
// those of an earlier attempt.
func (c *Consumer) save(ctx context.Context, log *zap.Logger, t task.Task, st task.Status, reason, pr string, rounds []task.Round) {
	if c.Tasks == nil {
		return
	}
	t.Status, t.Reason, t.UpdatedAt = st, reason, time.Now().UTC()
	if rounds != nil {
		t.Rounds = rounds
	}
	if pr != "" {
		t.PullRequest = pr
	}
	if err := c.Tasks.SaveTask(ctx, t); err != nil {
		log.Warn("record task status", zap.String("status", string(st)), zap.Error(err))
	}
}
