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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/store"
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
	// RefreshGroup renews taskID's claim while triage works on the group,
	// taking it back if it lapsed; false means another task holds it now.
	RefreshGroup(ctx context.Context, fingerprint, taskID string) (bool, error)
	SaveTask(ctx context.Context, t task.Task) error
	// GetTask reads a task; an error wrapping store.ErrNotFound when
	// there is none.
	GetTask(ctx context.Context, id string) (task.Task, error)
	// GroupClaim is the group's owner and how long its claim has left.
	GroupClaim(ctx context.Context, fingerprint string) (owner string, ttl time.Duration, ok bool, err error)
	// TakeOverGroup makes taskID the group's owner if from still owns it;
	// false when another task owns it now.
	TakeOverGroup(ctx context.Context, fingerprint, from, taskID string) (bool, error)
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
	// DailyJobs is how many jobs a repository may get each UTC day, 0 for
	// no limit; DailyJobsByRepo sets it for some repositories (0 there is
	// no limit too). The count is the store's (see JobBudget).
	DailyJobs       int
	DailyJobsByRepo map[string]int
	// Confidence is the bisection's (bisect.DefaultConfidence when 0).
	Confidence float64
	// BisectParallel bounds the commits a bisection tests at once.
	BisectParallel int
	// ClaimRefresh is how often a group's claim is renewed while triage
	// works on it; 0 means a minute. It must be well under the store's
	// triage claim TTL.
	ClaimRefresh time.Duration
	// Checkouts, when set, opens the workspace (from a mirror of a remote
	// repository, with its credentials); nil clones afresh.
	Checkouts Checkouts
	// Heads finds the default branch's head, where a failure may already
	// be fixed; nil uses Checkouts when it can tell, else asks the
	// repository itself (git ls-remote, no credentials).
	Heads DefaultHeads
	// HumanFixes, when set, finds a person's open pull request that
	// already names the failing tests or the blame commit, or changes the
	// files the failure points at; the task is then dropped.
	HumanFixes HumanFixes
	// MaxGroupsPerReport bounds the failure groups of one report that
	// triage decides one by one (reproduces, bisects, makes a task of);
	// DefaultMaxGroupsPerReport when 0. See Process.
	MaxGroupsPerReport int
}

// Checkouts opens a workspace of repo at commit under parent.
type Checkouts interface {
	Open(ctx context.Context, repo, commit, parent string) (*workspace.Workspace, error)
}

// DefaultReruns is Config.Reruns' default.
const DefaultReruns = 5

// DefaultMaxGroupsPerReport is Config.MaxGroupsPerReport's default.
const DefaultMaxGroupsPerReport = 20

// Triage is the service.
type Triage struct {
	store  Store
	queue  Queue
	runner Runner
	heads  DefaultHeads
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
	if cfg.MaxGroupsPerReport < 1 {
		cfg.MaxGroupsPerReport = DefaultMaxGroupsPerReport
	}
	heads := cfg.Heads
	if heads == nil {
		heads, _ = cfg.Checkouts.(DefaultHeads)
	}
	if heads == nil {
		heads = lsRemoteHeads{}
	}
	return &Triage{store: store, queue: q, runner: runner, heads: heads, cfg: cfg, log: log, now: time.Now}
}

// Input is one failing CI run to triage.
type Input struct {
	Repo   string // a path or URL that git can clone
	Commit string // the failing commit
	Good   string // the last green commit, if known
	Branch string
	Report report.Result
	// Submission and Received identify the report, when it came through
	// the intake: a redelivered report then gets the same task IDs, so
	// that triage picks up where a crashed instance stopped.
	Submission string
	Received   time.Time
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
// with each. A package that did not build is a group of its own, triaged
// the same way: its build is reproduced and bisected, and its task's
// failure is the compiler's message. An error means triage could not finish (git,
// the store, the queue, a cancelled context): the groups it had not decided
// are released, and the outcomes so far are returned with the error, so that
// the report can be triaged again.
//
// At most Config.MaxGroupsPerReport groups are triaged, one outcome each.
// The groups are taken in order, packages that did not build first, then
// the tests' groups as the report lists them; when there are more than the
// cap and the store can tell, the groups that another task already has go
// last, so that the cap goes to failures nobody works on yet (a group that
// a task has would only be dropped as its duplicate). The groups past the
// cap are neither claimed nor run: they are one dropped outcome whose
// reason says how many there are (ReasonBeyondCap) and whose task lists
// the first of them; a later report of the same failures gets to them.
func (t *Triage) Process(ctx context.Context, in Input) ([]Outcome, error) {
	if in.Repo == "" || in.Commit == "" {
		return nil, fmt.Errorf("triage: input needs a repository and a commit")
	}
	log := t.log.With(zap.String("repo", in.Repo), zap.String("commit", in.Commit))
	groups := GroupFailures(in.Repo, in.Report.Failures)
	if len(in.Report.Incomplete) > 0 {
		// Tests cut off with their package are not failures: only those
		// that ended failing are triaged.
		log.Warn("report is incomplete", zap.Strings("packages", in.Report.Incomplete), zap.Int("not_run", len(in.Report.NotRun)))
	}
	// Packages that do not build come first: their tests could not run.
	groups = append(GroupFailures(in.Repo, in.Report.BuildErrors), groups...)
	var outs []Outcome
	if len(groups) == 0 {
		return outs, nil
	}
	log.Info("triage report", zap.Int("failures", len(in.Report.Failures)), zap.Int("build_errors", len(in.Report.BuildErrors)), zap.Int("groups", len(groups)))

	p := &process{t: t, in: in}
	defer p.close()
	groups = p.newFirst(ctx, groups)
	for i, g := range groups {
		if i == t.cfg.MaxGroupsPerReport {
			o, err := p.beyondCap(ctx, groups[i:], log)
			if err != nil {
				return outs, fmt.Errorf("triage %s at %s: %w", in.Repo, task.Short(in.Commit), err)
			}
			return append(outs, o), nil
		}
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
	// blames are the culprits found for earlier groups, and the blame
	// groups this report's tasks claimed.
	blames      []task.Bisection
	blameClaims []blameClaim
	// The default branch's head, asked once.
	headAsked              bool
	headBranch, headCommit string
	headErr                error
}

func (p *process) close() {
	if p.ws != nil {
		_ = p.ws.Close()
	}
}

func (p *process) workspace(ctx context.Context) (*workspace.Workspace, error) {
	if p.ws == nil {
		open := workspace.Open
		if p.t.cfg.Checkouts != nil {
			open = p.t.cfg.Checkouts.Open
		}
		ws, err := open(ctx, p.in.Repo, p.in.Commit, p.t.cfg.WorkDir)
		if err != nil {
			return nil, err
		}
		p.ws = ws
		return ws, nil
	}
	return p.ws, p.ws.Reset(ctx)
}

// takeOverFrom are the statuses of a group's task that leave the group to
// the next report of the failure at once: that task ended with no verdict
// on the failure itself (an infrastructure error, the day's budget).
// A task that ended with a verdict (no_patch: the agent's repair did not
// pass the gates; dropped: flaky, not reproduced, fixed, a person's fix
// in flight, ...) keeps the group until the verdict's claim expires
// (triage.verdict_ttl): repairing the same failure again on every CI run
// would spend a repair each time on what was just tried.
var takeOverFrom = []task.Status{task.StatusFailed, task.StatusOverBudget}

// ownedByAnother decides about a group that task owner holds: this task
// takes it over (tookOver) when owner ended with no verdict on the
// failure; otherwise reason says why this one is dropped.
func (t *Triage) ownedByAnother(ctx context.Context, fingerprint, owner, id string) (reason string, tookOver bool, err error) {
	prev, err := t.store.GetTask(ctx, owner)
	if errors.Is(err, store.ErrNotFound) {
		// Its triage is still running (it saves the task when it decides).
		return "duplicate of task " + owner, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read task %s, which holds group %s: %w", owner, fingerprint, err)
	}
	switch {
	case slices.Contains(takeOverFrom, prev.Status):
		ok, err := t.store.TakeOverGroup(ctx, fingerprint, owner, id)
		if err != nil {
			return "", false, err
		}
		if !ok {
			return "duplicate: another task took the group over from task " + owner + ", which ended " + string(prev.Status), false, nil
		}
		return "", true, nil
	case prev.Status == task.StatusNoPatch || prev.Status == task.StatusDropped:
		again := "once that verdict expires (triage.verdict_ttl)"
		if _, ttl, ok, err := t.store.GroupClaim(ctx, fingerprint); err == nil && ok && ttl > 0 {
			again = fmt.Sprintf("in %s, when that verdict expires (triage.verdict_ttl)", ttl.Round(time.Minute))
		}
		return fmt.Sprintf("same failure as task %s, which ended without a fix (%s: %s); triaged again %s",
			owner, prev.Status, clip(prev.Reason, 200), again), false, nil
	}
	// Queued, running, or published: the failure is in hand.
	return "duplicate of task " + owner, false, nil
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func (p *process) group(ctx context.Context, g Group, log *zap.Logger) (Outcome, error) {
	t, in := p.t, p.in
	id := taskID(in, g.Fingerprint, t.now())
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
	switch {
	case created:
		log.Info("claimed group")
	case existing == id:
		// This report's earlier delivery claimed the group and stopped
		// (a crash, a shutdown): go on where it left off.
		log.Info("resuming the group's triage after an interrupted delivery")
	default:
		reason, tookOver, err := t.ownedByAnother(ctx, g.Fingerprint, existing, id)
		if err != nil {
			return out, err
		}
		if !tookOver {
			return drop(reason)
		}
		log.Info("took the group over from a task that ended with no verdict on the failure", zap.String("previous_task", existing))
		created = true
	}
	resumed := !created
	if !resumed {
		// A budget spent for today stops the work before it starts; the
		// group is left unclaimed, to be triaged when there is room again.
		reason, err := t.budgetSpent(ctx, in.Repo)
		if err == nil && reason != "" {
			err = t.store.ReleaseGroup(ctx, g.Fingerprint, id)
		}
		if err != nil {
			return out, fmt.Errorf("daily job budget of %s: %w", in.Repo, err)
		}
		if reason != "" {
			addRule(&tk, RuleBudget, task.RuleDrop, reason)
			return drop(reason)
		}
	}
	// The triage's own work stops when another task takes the group (its
	// claim lapsed, and another report's triage claimed it).
	work, lostTo, stopRefresh := t.keepClaim(ctx, g.Fingerprint, id, log)
	defer stopRefresh()
	lost := func(err error) (Outcome, error) {
		switch owner := lostTo(); owner {
		case "":
			return out, err
		case unknownOwner:
			return drop("duplicate: another task took the group while this triage ran")
		default:
			return drop("duplicate of task " + owner + ": it took the group while this triage ran")
		}
	}
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
		p.releaseBlame(rctx, id, log)
	}()
	ws, err := p.workspace(work)
	if err != nil {
		return lost(err)
	}
	tk.Commit = ws.Commit
	var (
		bis    task.Bisection
		bisErr error
		reason string
	)
	if isBuildGroup(g) {
		bis, bisErr, reason, err = p.buildEvidence(ctx, work, ws.Repo, &tk, &out, log)
	} else {
		bis, bisErr, reason, err = p.testEvidence(ctx, work, lostTo, g, ws.Repo, &tk, &out, log)
	}
	if lostTo() != "" {
		return lost(err)
	}
	if err != nil {
		return out, err
	}
	if reason != "" {
		return decide(reason)
	}
	if bisErr != nil {
		// Where the failure started is evidence for the agent, not a
		// condition of repairing it: go on without a blame.
		log.Warn("bisect", zap.Error(bisErr))
	} else {
		log.Info("bisected", zap.String("blame", bis.Blame), zap.Int("steps", bis.Steps))
	}
	tk.Bisection = bis
	if reason := p.humanFix(ctx, ws.Repo, &tk, log); reason != "" {
		return decide(reason)
	}
	if bisErr == nil && bis.Blame != "" {
		owner, err := p.claimBlame(ctx, in.Repo, bis.Blame, id, tk.Failures)
		if err != nil {
			return out, err
		}
		if owner != "" {
			return decide(fmt.Sprintf("same blame commit %s as task %s: one task per breaking commit (its failures were added to it)", task.Short(bis.Blame), owner))
		}
		// Ours: the claim lives as long as the task is active (the store
		// follows its status).
		tk.BlameClaim = BlameGroup(in.Repo, bis.Blame)
	}

	// Queue first, then record: the job's message ID is the group's
	// fingerprint and this task's ID, stable across redeliveries of the
	// report, so a crash after queueing and before recording is repaired by
	// the redelivery (queueing again is a no-op, recording follows), and
	// the worker records the task when it starts in any case. The other
	// order could leave a task recorded as queued that no worker will ever
	// take.
	// The claim must be this task's when the job is queued: a claim that
	// passed to another task means that task queues the group.
	held, err := t.store.RefreshGroup(ctx, g.Fingerprint, id)
	if err != nil {
		return out, fmt.Errorf("renew claim of group %s: %w", g.Fingerprint, err)
	}
	if !held {
		return drop("duplicate: another task took the group while this triage ran")
	}
	reason, giveBack, err := t.takeBudget(ctx, in.Repo, &tk, log)
	if err != nil {
		return out, fmt.Errorf("daily job budget of %s: %w", in.Repo, err)
	}
	switch {
	case reason != "" && resumed:
		// An earlier delivery of this report may have queued the job and
		// counted it: queue (a no-op then) rather than drop a queued task.
		log.Warn("resumed triage past the daily job budget", zap.String("budget", reason))
		tk.Rules[len(tk.Rules)-1] = task.RuleCheck{Rule: RuleBudget, Verdict: task.RuleNotChecked, Detail: "an earlier delivery of this report may have counted the job: " + reason}
		giveBack = func() {}
	case reason != "":
		// Dropped, not decided: the group and its blame are released, to
		// be triaged again when the budget has room.
		return drop(reason)
	}
	tk.Status = task.StatusQueued
	tk.UpdatedAt = t.now().UTC()
	dup, err := t.queue.Enqueue(ctx, job.New(tk))
	if err != nil {
		giveBack()
		return out, fmt.Errorf("enqueue task %s: %w", id, err)
	}
	if dup {
		// An earlier delivery of this report queued it and counted it.
		giveBack()
	}
	decided = true // the job exists: the claim stays with this task
	if err := t.store.SaveTask(ctx, tk); err != nil {
		return out, fmt.Errorf("save task %s: %w", id, err)
	}
	if dup {
		log.Info("job was already queued by an earlier delivery of this report")
	}
	log.Info("queued", zap.Int("test_runs", out.TestRuns))
	out.Status, out.Task = task.StatusQueued, &tk
	return out, nil
}

// bisector is the service's bisection: its bounds, and the store's runs by
// commit as its cache when the store keeps them.
func (t *Triage) bisector(log *zap.Logger) bisect.Bisector {
	b := bisect.Bisector{Runner: t.runner, MaxSteps: t.cfg.MaxBisectSteps, Confidence: t.cfg.Confidence, Parallel: t.cfg.BisectParallel, WorkDir: t.cfg.WorkDir, Log: log}
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

// taskID names the task of one group of one report. With the report's
// submission known, it is the same on every delivery of that report;
// otherwise it is new.
func taskID(in Input, fingerprint string, now time.Time) string {
	if in.Submission == "" || in.Received.IsZero() {
		return newTaskID(now)
	}
	sum := sha256.Sum256([]byte(in.Submission + "\x00" + fingerprint))
	return in.Received.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(sum[:6])
}

// keepClaim renews the group's claim until stop is called, so that the
// claim of a live triage does not lapse while that of a dead one does. A
// claim that lapsed all the same (a refresh late on a loaded machine) is
// taken back. When another task holds the group, work is cancelled and
// lostTo names that task.
func (t *Triage) keepClaim(ctx context.Context, fingerprint, id string, log *zap.Logger) (work context.Context, lostTo func() string, stop func()) {
	every := t.cfg.ClaimRefresh
	if every <= 0 {
		every = time.Minute
	}
	work, cancel := context.WithCancel(ctx)
	var (
		mu    sync.Mutex
		owner string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-work.Done():
				return
			case <-tick.C:
			}
			held, err := t.store.RefreshGroup(work, fingerprint, id)
			switch {
			case err != nil && work.Err() == nil:
				log.Warn("refresh group claim", zap.Error(err))
			case err == nil && !held:
				cur := t.claimOwner(work, fingerprint)
				log.Warn("another task took the group while this triage ran; stopping", zap.String("owner", cur))
				mu.Lock()
				owner = cur
				mu.Unlock()
				cancel()
				return
			}
		}
	}()
	lostTo = func() string {
		mu.Lock()
		defer mu.Unlock()
		return owner
	}
	return work, lostTo, func() {
		cancel()
		<-done
	}
}

// claimOwner names the group's owner when the store can tell,
// unknownOwner otherwise.
func (t *Triage) claimOwner(ctx context.Context, fingerprint string) string {
	if c, ok := t.store.(groupClaims); ok {
		if owner, _, ok, err := c.GroupClaim(ctx, fingerprint); err == nil && ok {
			return owner
		}
	}
	return unknownOwner
}

const unknownOwner = "another task"

// newTaskID is unique and sorts by time: 20261122T101500Z-3f9a2b1c4d5e.
func newTaskID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// testEvidence records a test group's CI failures, re-runs its tests in the
// workspace at dir, and bisects them when they fail reliably; the runs use
// work, which ends when another task takes the group (lostTo). A non-empty
// reason drops the group; bisErr says why there is no blame (wrapping
// bisect.ErrCannotBisect) when the search could not name one.
func (p *process) testEvidence(ctx, work context.Context, lostTo func() string, g Group, repo gitrepo.Repo, tk *task.Task, out *Outcome, log *zap.Logger) (bis task.Bisection, bisErr error, reason string, err error) {
	t, commit, dir := p.t, tk.Commit, repo.Dir
	for _, f := range g.Failures {
		if err := t.store.RecordRun(ctx, f.ID(), true); err != nil {
			return bis, nil, "", fmt.Errorf("record CI failure of %s: %w", f.ID(), err)
		}
	}
	ids, err := testrun.Canonical(dir, out.Tests)
	if err != nil {
		return bis, nil, fmt.Sprintf("cannot run %s at %s: %v", strings.Join(out.Tests, ", "), task.Short(commit), err), nil
	}
	hist := p.history(ctx, ids, log)
	rep, err := Reproduce(work, t.runner, dir, ids, hist.reruns)
	out.TestRuns += rep.Flakiness.Runs
	if lostTo() != "" {
		return bis, nil, "", err
	}
	if err != nil {
		var nr *NotRunError
		if errors.As(err, &nr) {
			return bis, nil, fmt.Sprintf("does not reproduce at %s: %s", task.Short(commit), nr), nil
		}
		return bis, nil, "", err
	}
	tk.Flakiness = rep.Flakiness
	tk.FlakinessByTest = ByTest(rep.Tests)
	tk.Failures = relativeFailures(dir, tk.Failures, rep)
	history, err := p.record(ctx, rep)
	if err != nil {
		return bis, nil, "", err
	}
	flakyHere, err := p.keepReruns(ctx, hist, commit, rep)
	if err != nil {
		return bis, nil, "", err
	}
	if flakyHere && rep.Flakiness.Verdict == VerdictReliable {
		// It passed at this commit before: flaky by definition.
		rep.Flakiness.Verdict = VerdictFlaky
		tk.Flakiness.Verdict = VerdictFlaky
		history += "; it passed at this commit before"
	}
	if hist.score.Flaky() {
		history += fmt.Sprintf("; flaky at %d of %d commits, flake rate %.0f%%", hist.score.FlakyCommits, hist.score.Commits, 100*hist.score.Rate)
	}
	log.Info("reproduced", zap.String("verdict", rep.Flakiness.Verdict), zap.Int("runs", rep.Flakiness.Runs), zap.Int("failures", rep.Flakiness.Failures), zap.String("history", history))
	switch rep.Flakiness.Verdict {
	case VerdictFlaky:
		reason := fmt.Sprintf("flaky: %d/%d runs failed at %s; %s", rep.Flakiness.Failures, rep.Flakiness.Runs, task.Short(commit), history)
		if err := p.quarantine(ctx, *tk, rep, hist, reason); err != nil {
			return bis, nil, "", err
		}
		return bis, nil, reason, nil
	case VerdictPassing:
		return bis, nil, fmt.Sprintf("does not reproduce at %s: 0/%d runs failed; %s", task.Short(commit), rep.Flakiness.Runs, history), nil
	}

	reason, err = p.fixedAtHead(work, repo, tk, log, func() (bool, string, error) {
		at, err := Reproduce(work, t.runner, dir, ids, hist.reruns)
		out.TestRuns += at.Flakiness.Runs
		var nr *NotRunError
		switch {
		case errors.As(err, &nr):
			return false, nr.Error(), nil
		case err != nil:
			return false, "", err
		}
		return at.Flakiness.Verdict == VerdictPassing, fmt.Sprintf("%s passed %d/%d runs", strings.Join(ids, ", "), at.Flakiness.Runs, at.Flakiness.Runs), nil
	})
	if lostTo() != "" || err != nil || reason != "" {
		return bis, nil, reason, err
	}

	b := t.bisector(log)
	b.FlakeRate = hist.score.Rate
	bis, err = p.bisect(work, b, repo, p.in.Good, commit, ids, log)
	out.TestRuns += bis.Steps
	switch {
	case lostTo() != "":
		return bis, nil, "", err
	case errors.Is(err, bisect.ErrCannotBisect):
		return bis, err, "", nil
	case err != nil:
		return bis, nil, "", err
	}
	return bis, nil, "", nil
}
