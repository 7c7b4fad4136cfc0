// Package triage decides which failing tests become repair tasks. It groups
// a report's failures by fingerprint, drops what is already grouped or
// belongs to an opted-out repository, re-runs the rest at the failing commit
// to tell real failures from flaky ones, bisects the real ones to the commit
// that broke them, and saves and queues a task for each group. Whatever it
// drops is saved too, with its reason.
package triage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/workspace"
)

// Store is the state triage keeps.
type Store interface {
	// ClaimGroup makes taskID the owner of the failure group fingerprint
	// unless a task owns it already, whose ID it then returns.
	ClaimGroup(ctx context.Context, fingerprint, taskID string) (existingTaskID string, created bool, err error)
	// ReleaseGroup gives the group up if taskID still owns it, so that a
	// report that triage could not finish is triaged again on redelivery.
	ReleaseGroup(ctx context.Context, fingerprint, taskID string) error
	SaveTask(ctx context.Context, t task.Task) error
	// RecordRun adds one run of a test to its history.
	RecordRun(ctx context.Context, testID string, failed bool) error
	TestHistory(ctx context.Context, testID string) (runs, failures int, err error)
}

// Queue takes jobs for the workers.
type Queue interface {
	// Enqueue publishes j; duplicate says the queue already held a job
	// with its ID.
	Enqueue(ctx context.Context, j job.Job) (duplicate bool, err error)
}

// Config tunes triage.
type Config struct {
	Reruns int // runs at the failing commit; 5 when 0
	// WorkDir is where workspaces are made; "" for the system's temporary
	// directory.
	WorkDir        string
	MaxBisectSteps int // 0 for no bound
	// OptOut are repositories that triage leaves alone.
	OptOut []string
	// Confidence is the bisection's (DefaultConfidence when 0).
	Confidence float64
	// BisectParallel bounds the commits a bisection tests at once.
	BisectParallel int
}

// DefaultReruns is Config.Reruns' default.
const DefaultReruns = 5

// Triage is the service.
type Triage struct {
	store  Store
	queue  Queue
	runner Runner
	cfg    Config
	log    *zap.Logger
	now    func() time.Time
}

// New makes the service. A nil runner runs go test with testrun's defaults;
// a nil log logs nothing.
func New(store Store, q Queue, runner Runner, cfg Config, log *zap.Logger) *Triage {
	if runner == nil {
		runner = testrun.Runner{}
	}
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.Reruns < 1 {
		cfg.Reruns = DefaultReruns
	}
	return &Triage{store: store, queue: q, runner: runner, cfg: cfg, log: log, now: time.Now}
}

// Input is one failing CI run to triage.
type Input struct {
	Repo   string // a path or URL that git can clone
	Commit string // the failing commit
	Good   string // the last green commit, if known
	Branch string
	Report report.Result
}

// Outcome is what triage did with one failure group.
type Outcome struct {
	Fingerprint string      `json:"fingerprint"`
	TaskID      string      `json:"task_id,omitempty"`
	Tests       []string    `json:"tests"`
	Status      task.Status `json:"status"` // queued or dropped
	Reason      string      `json:"reason,omitempty"`
	Task        *task.Task  `json:"task,omitempty"`
	// TestRuns counts the test runs spent: reruns and bisection steps.
	TestRuns int `json:"test_runs"`
}

// Process triages a failing CI run, group by group, and returns what it did
// with each. Build errors in the report are not triaged yet: each gets a
// dropped outcome saying so. An error means triage could not finish (git,
// the store, the queue, a cancelled context): the groups it had not decided
// are released, and the outcomes so far are returned with the error, so that
// the report can be triaged again.
func (t *Triage) Process(ctx context.Context, in Input) ([]Outcome, error) {
	if in.Repo == "" || in.Commit == "" {
		return nil, fmt.Errorf("triage: input needs a repository and a commit")
	}
	log := t.log.With(zap.String("repo", in.Repo), zap.String("commit", in.Commit))
	groups := GroupFailures(in.Repo, in.Report.Failures)
	var outs []Outcome
	for _, b := range in.Report.BuildErrors {
		outs = append(outs, Outcome{
			Fingerprint: Fingerprint(in.Repo, b),
			Tests:       []string{b.Package},
			Status:      task.StatusDropped,
			Reason:      fmt.Sprintf("package %s does not build: build failures are not triaged yet", b.Package),
		})
	}
	if len(groups) == 0 {
		return outs, nil
	}
	log.Info("triage report", zap.Int("failures", len(in.Report.Failures)), zap.Int("groups", len(groups)))

	p := &process{t: t, in: in}
	defer p.close()
	for _, g := range groups {
		o, err := p.group(ctx, g, log)
		if err != nil {
			return outs, fmt.Errorf("triage %s at %s: %w", in.Repo, task.Short(in.Commit), err)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// process is one Process call: its workspace is made on the first group
// that needs one and shared by the rest.
type process struct {
	t  *Triage
	in Input
	ws *workspace.Workspace
}

func (p *process) close() {
	if p.ws != nil {
		_ = p.ws.Close()
	}
}

func (p *process) workspace(ctx context.Context) (*workspace.Workspace, error) {
	if p.ws == nil {
		ws, err := workspace.Open(ctx, p.in.Repo, p.in.Commit, p.t.cfg.WorkDir)
		if err != nil {
			return nil, err
		}
		p.ws = ws
		return ws, nil
	}
	return p.ws, p.ws.Reset(ctx)
}

func (p *process) group(ctx context.Context, g Group, log *zap.Logger) (Outcome, error) {
	t, in := p.t, p.in
	id := newTaskID(t.now())
	out := Outcome{Fingerprint: g.Fingerprint, TaskID: id, Tests: g.Tests()}
	log = log.With(zap.String("task_id", id), zap.String("fingerprint", g.Fingerprint), zap.Strings("tests", out.Tests))
	tk := task.Task{
		ID:          id,
		Fingerprint: g.Fingerprint,
		Repo:        in.Repo,
		Commit:      in.Commit,
		Branch:      in.Branch,
		Failures:    g.Failures,
		CreatedAt:   t.now().UTC(),
	}
	drop := func(reason string) (Outcome, error) {
		tk.Status, tk.Reason = task.StatusDropped, reason
		tk.UpdatedAt = t.now().UTC()
		if err := t.store.SaveTask(ctx, tk); err != nil {
			return out, fmt.Errorf("save dropped task %s: %w", id, err)
		}
		log.Info("dropped", zap.String("reason", reason), zap.Int("test_runs", out.TestRuns))
		out.Status, out.Reason, out.Task = task.StatusDropped, reason, &tk
		return out, nil
	}

	if optedOut(t.cfg.OptOut, in.Repo) {
		return drop("repository opted out")
	}
	existing, created, err := t.store.ClaimGroup(ctx, g.Fingerprint, id)
	if err != nil {
		return out, fmt.Errorf("claim group %s: %w", g.Fingerprint, err)
	}
	if !created {
		return drop("duplicate of task " + existing)
	}
	log.Info("claimed group")
	// From here the group is ours: give it back unless a task for it is
	// saved (dropped or queued).
	decided := false
	decide := func(reason string) (Outcome, error) {
		o, err := drop(reason)
		decided = err == nil
		return o, err
	}
	defer func() {
		if decided {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := t.store.ReleaseGroup(rctx, g.Fingerprint, id); err != nil {
			log.Error("release group", zap.Error(err))
		}
	}()
	for _, f := range g.Failures {
		if err := t.store.RecordRun(ctx, f.ID(), true); err != nil {
			return out, fmt.Errorf("record CI failure of %s: %w", f.ID(), err)
		}
	}

	ws, err := p.workspace(ctx)
	if err != nil {
		return out, err
	}
	tk.Commit = ws.Commit
	ids, err := Canonical(ws.Dir, out.Tests)
	if err != nil {
		return decide(fmt.Sprintf("cannot run %s at %s: %v", strings.Join(out.Tests, ", "), task.Short(ws.Commit), err))
	}

	rep, err := Reproduce(ctx, t.runner, ws.Dir, ids, t.cfg.Reruns)
	out.TestRuns += rep.Flakiness.Runs
	if err != nil {
		var nr *NotRunError
		if errors.As(err, &nr) {
			return decide(fmt.Sprintf("does not reproduce at %s: %s", task.Short(ws.Commit), nr))
		}
		return out, err
	}
	tk.Flakiness = rep.Flakiness
	tk.FlakinessByTest = ByTest(rep.Tests)
	tk.Failures = relativeFailures(ws.Dir, tk.Failures, rep)
	history, err := p.record(ctx, rep)
	if err != nil {
		return out, err
	}
	log.Info("reproduced", zap.String("verdict", rep.Flakiness.Verdict), zap.Int("runs", rep.Flakiness.Runs), zap.Int("failures", rep.Flakiness.Failures), zap.String("history", history))
	switch rep.Flakiness.Verdict {
	case VerdictFlaky:
		return decide(fmt.Sprintf("flaky: %d/%d runs failed at %s; %s", rep.Flakiness.Failures, rep.Flakiness.Runs, task.Short(ws.Commit), history))
	case VerdictPassing:
		return decide(fmt.Sprintf("does not reproduce at %s: 0/%d runs failed; %s", task.Short(ws.Commit), rep.Flakiness.Runs, history))
	}

	bis, err := t.bisector(log).bisect(ctx, ws.Dir, in.Good, ws.Commit, ids, true)
	out.TestRuns += bis.Steps
	switch {
	case errors.Is(err, ErrCannotBisect):
		// Where the failure started is evidence for the agent, not a
		// condition of repairing it: go on without a blame.
		log.Warn("bisect", zap.Error(err))
	case err != nil:
		return out, err
	default:
		log.Info("bisected", zap.String("blame", bis.Blame), zap.Int("steps", bis.Steps))
	}
	tk.Bisection = bis

	tk.Status = task.StatusQueued
	tk.UpdatedAt = t.now().UTC()
	if err := t.store.SaveTask(ctx, tk); err != nil {
		return out, fmt.Errorf("save task %s: %w", id, err)
	}
	dup, err := t.queue.Enqueue(ctx, job.New(tk))
	if err != nil {
		tk.Status, tk.Reason = task.StatusFailed, "enqueue: "+err.Error()
		if serr := t.store.SaveTask(context.WithoutCancel(ctx), tk); serr != nil {
			log.Error("save failed task", zap.Error(serr))
		}
		return out, fmt.Errorf("enqueue task %s: %w", id, err)
	}
	decided = true
	if dup {
		out.Reason = "the queue already held a job for this group"
		log.Warn("job already queued")
	}
	log.Info("queued", zap.Int("test_runs", out.TestRuns))
	out.Status, out.Task = task.StatusQueued, &tk
	return out, nil
}

// bisector is the service's bisection: its bounds, and the store's runs by
// commit as its cache when the store keeps them.
func (t *Triage) bisector(log *zap.Logger) Bisector {
	b := Bisector{Runner: t.runner, MaxSteps: t.cfg.MaxBisectSteps, Confidence: t.cfg.Confidence, Parallel: t.cfg.BisectParallel, Log: log}
	if c, ok := t.store.(RunCache); ok {
		b.Cache = c
	}
	return b
}

// record adds the reruns to the tests' history and describes that history.
func (p *process) record(ctx context.Context, rep Reproduction) (string, error) {
	var parts []string
	for _, ev := range rep.Tests {
		for i := 0; i < ev.Runs; i++ {
			if err := p.t.store.RecordRun(ctx, ev.Test, i < ev.Failures); err != nil {
				return "", fmt.Errorf("record run of %s: %w", ev.Test, err)
			}
		}
		runs, failures, err := p.t.store.TestHistory(ctx, ev.Test)
		if err != nil {
			return "", fmt.Errorf("history of %s: %w", ev.Test, err)
		}
		parts = append(parts, fmt.Sprintf("%d/%d recorded runs failed", failures, runs))
	}
	return "history: " + strings.Join(parts, ", "), nil
}

func optedOut(list []string, repo string) bool {
	r := normalizeRepo(repo)
	return slices.ContainsFunc(list, func(o string) bool { return normalizeRepo(o) == r })
}

// newTaskID is unique and sorts by time: 20261122T101500Z-3f9a2b1c4d5e.
func newTaskID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
