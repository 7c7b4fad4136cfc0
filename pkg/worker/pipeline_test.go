package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/worker"
	"github.com/redfix/redfix/pkg/workspace"
)

// The demo's bug: commit 4 made the discount tiers exclusive of their
// minimum. fixDiscount puts it back.
var fixDiscount = edit{"pricing/pricing.go", "qty > t.MinQty", "qty >= t.MinQty"}

// edit replaces old with new, once, in a workspace file.
type edit struct{ file, old, new string }

// scriptedAgent is an agent that makes fixed edits and reports what a real
// agent would: the workspace's diff, and whether it believes the failing
// tests pass.
type scriptedAgent struct {
	edits       []edit
	testsPassed bool
	// revert: the agent's exit says only undoing the culprit passed.
	revert bool
	err    error // returned instead of a result
	// block, when set, makes Run wait for ctx to end and return its error;
	// started is closed (once) when it begins waiting.
	block   bool
	started chan struct{}
	once    *sync.Once
}

func (a scriptedAgent) Run(ctx context.Context, ws *workspace.Workspace, t task.Task, traj io.Writer) (harness.Result, error) {
	if a.block {
		a.once.Do(func() { close(a.started) })
		<-ctx.Done()
		return harness.Result{}, ctx.Err()
	}
	if a.err != nil {
		return harness.Result{}, a.err
	}
	for _, e := range a.edits {
		p := filepath.Join(ws.Dir, filepath.FromSlash(e.file))
		data, err := os.ReadFile(p)
		if err != nil {
			return harness.Result{}, err
		}
		if strings.Count(string(data), e.old) != 1 {
			return harness.Result{}, fmt.Errorf("scripted edit of %s: %q does not occur exactly once", e.file, e.old)
		}
		// Edits go through the workspace, as the harness's do: its patch
		// is made of them.
		if err := ws.WriteFile(e.file, []byte(strings.Replace(string(data), e.old, e.new, 1)), 0o644); err != nil {
			return harness.Result{}, err
		}
		fmt.Fprintf(traj, "{\"tool\":\"edit\",\"path\":%q}\n", e.file)
	}
	diff, err := ws.Diff(ctx)
	if err != nil {
		return harness.Result{}, err
	}
	return harness.Result{Patch: diff, Summary: "scripted edits", TestsPassed: a.testsPassed, Steps: len(a.edits), Stop: "exit", RevertPasses: a.revert && diff == ""}, nil
}

// countingPublisher counts the calls that reach the real publisher.
type countingPublisher struct {
	worker.Publisher
	calls atomic.Int32
}

func (p *countingPublisher) Publish(ctx context.Context, pr publish.PullRequest) (string, error) {
	p.calls.Add(1)
	return p.Publisher.Publish(ctx, pr)
}

// sample builds the demo repository once per test.
func sample(t *testing.T) demo.Sample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := demo.Build(ctx, filepath.Join(t.TempDir(), "shop"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// demoTask is the task triage makes of the sample's CI report.
func demoTask(s demo.Sample, fingerprint string) task.Task {
	return task.Task{
		ID:          "task-" + fingerprint,
		Fingerprint: fingerprint,
		Repo:        s.Dir,
		Commit:      s.Head,
		Branch:      "main",
		Failures: []task.Failure{{
			Package: "example.com/shop/pricing",
			Test:    "TestVolumeDiscount/at_threshold",
			Message: "Quote(widget, 10) = 10000, want 9000",
		}},
		Bisection: task.Bisection{Good: s.Good, Bad: s.Head, Blame: s.Commits[3]},
		Status:    task.StatusQueued,
		CreatedAt: time.Now().UTC().Truncate(time.Second),
	}
}

// newStore is a store on a fresh in-process Redis-protocol server.
func newStore(t *testing.T) *store.Store {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	return store.New(rdb, "")
}

// rig is a pipeline with the real gates, judge, publisher and ledger.
type rig struct {
	pipeline  *worker.Pipeline
	publisher *countingPublisher
	prDir     string
	store     *store.Store
}

func newRig(t *testing.T, agent worker.Agent) *rig {
	t.Helper()
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	r := &rig{prDir: t.TempDir(), store: newStore(t)}
	r.publisher = &countingPublisher{Publisher: publish.NewLocal(r.prDir, log)}
	r.pipeline = &worker.Pipeline{
		NewAgent:  func() worker.Agent { return agent },
		Policy:    "scripted",
		Gates:     validators.New(validators.Config{}, log),
		Judge:     judge.NotRun{},
		Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 2 * time.Minute}}),
		Publisher: r.publisher,
		Ledger:    r.store,
		WorkDir:   t.TempDir(),
		Log:       log,
	}
	return r
}

// pullRequests lists the pull request directories the publisher wrote.
func (r *rig) pullRequests(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(r.prDir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(r.prDir, e.Name(), publish.FilePullRequest)); err == nil {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

func repair(t *testing.T, p *worker.Pipeline, tk task.Task) (worker.Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return p.Repair(ctx, tk)
}

func gate(gates []task.Gate, name string) (task.Gate, bool) {
	for _, g := range gates {
		if g.Name == name {
			return g, true
		}
	}
	return task.Gate{}, false
}

func TestRepairPublishesOnceAFixThatPassesTheGates(t *testing.T) {
	t.Parallel()
	s := sample(t)
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	tk := demoTask(s, "fp-demo-fix")

	out, err := repair(t, r.pipeline, tk)
	if err != nil {
		t.Fatalf("Repair: %v", err)
	}
	if out.Status != task.StatusPublished {
		t.Fatalf("status %s (%s), want published; gates: %+v", out.Status, out.Reason, out.Gates)
	}
	for _, name := range []string{validators.GateIntegrity, validators.GateRevert, validators.GateStatic, validators.GateOracle, validators.GateRegression} {
		g, ok := gate(out.Gates, name)
		if !ok || g.Verdict != task.GatePass {
			t.Errorf("gate %s: %+v (recorded %v), want pass", name, g, ok)
		}
	}
	if g, ok := gate(out.Gates, judge.GateName); !ok || g.Verdict != task.GateNotRun {
		t.Errorf("judge gate %+v (recorded %v), want not_run", g, ok)
	}
	if !strings.Contains(out.Agent.Patch, "qty >= t.MinQty") {
		t.Errorf("outcome's patch does not hold the fix:\n%s", out.Agent.Patch)
	}
	prs := r.pullRequests(t)
	if len(prs) != 1 || out.PullRequest != "file://"+filepath.Join(r.prDir, prs[0]) {
		t.Fatalf("pull requests %v, outcome's %q: want one, the outcome's", prs, out.PullRequest)
	}
	ctx := context.Background()
	if url, ok, err := r.store.Published(ctx, tk.Fingerprint); err != nil || !ok || url != out.PullRequest {
		t.Fatalf("ledger: %q %v %v, want %q", url, ok, err, out.PullRequest)
	}
	patch, err := os.ReadFile(filepath.Join(r.prDir, prs[0], publish.FilePatch))
	if err != nil || string(patch) != out.Agent.Patch {
		t.Fatalf("published patch differs from the agent's (%v)", err)
	}

	// The job is redelivered (a worker lost its ack): the ledger stops it
	// before any work, and nothing is published again.
	again, err := repair(t, r.pipeline, tk)
	if err != nil {
		t.Fatalf("second Repair: %v", err)
	}
	if again.Status != task.StatusPublished || again.PullRequest != out.PullRequest || again.Reason != "already published" {
		t.Fatalf("second Repair = %s %q %q, want published at %s, already published", again.Status, again.PullRequest, again.Reason, out.PullRequest)
	}
	if n := r.publisher.calls.Load(); n != 1 {
		t.Fatalf("publisher called %d times, want 1", n)
	}
	if prs := r.pullRequests(t); len(prs) != 1 {
		t.Fatalf("%d pull requests after a second repair, want 1: %v", len(prs), prs)
	}
}

func TestRepairRejects(t *testing.T) {
	t.Parallel()
	s := sample(t)
	for _, tc := range []struct {
		name   string
		agent  scriptedAgent
		reason string // the outcome's reason contains it
		failed string // the gate that must fail ("" when no gate runs)
	}{
		{
			name: "fix that breaks another test",
			agent: scriptedAgent{edits: []edit{fixDiscount,
				{"pricing/pricing.go", `return 0, fmt.Errorf("quote %s: unknown sku", sku)`, "return 0, nil"}}, testsPassed: true},
			reason: "rejected by regression",
			failed: validators.GateRegression,
		},
		{
			name: "change that does not fix the test",
			agent: scriptedAgent{edits: []edit{
				{"pricing/pricing.go", "// Quote is the price", "// Quote returns the price"}}, testsPassed: true},
			reason: "rejected by oracle",
			failed: validators.GateOracle,
		},
		{
			name:   "no change",
			agent:  scriptedAgent{testsPassed: true},
			reason: "the agent made no change",
		},
		{
			name:   "only a revert passes",
			agent:  scriptedAgent{revert: true},
			reason: "only a revert passes (undoing the culprit's change makes the failing tests pass; no fix found)",
		},
		{
			name:   "change the agent saw failing",
			agent:  scriptedAgent{edits: []edit{fixDiscount}, testsPassed: false},
			reason: "does not pass the failing tests",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.agent)
			tk := demoTask(s, "fp-"+strings.ReplaceAll(tc.name, " ", "-"))
			out, err := repair(t, r.pipeline, tk)
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if out.Status != task.StatusNoPatch || !strings.Contains(out.Reason, tc.reason) {
				t.Fatalf("outcome %s %q, want no_patch with %q; gates %+v", out.Status, out.Reason, tc.reason, out.Gates)
			}
			if tc.failed != "" {
				if g, _ := gate(out.Gates, tc.failed); g.Verdict != task.GateFail {
					t.Fatalf("gate %s = %+v, want fail", tc.failed, g)
				}
			}
			if _, ok := gate(out.Gates, judge.GateName); ok {
				t.Errorf("the judge ran on a rejected patch: %+v", out.Gates)
			}
			if n := r.publisher.calls.Load(); n != 0 || len(r.pullRequests(t)) != 0 {
				t.Fatalf("a rejected patch was published (%d calls)", n)
			}
			if _, ok, _ := r.store.Published(context.Background(), tk.Fingerprint); ok {
				t.Fatal("the ledger records a rejected patch as published")
			}
		})
	}
}

func TestRepairPermanentErrors(t *testing.T) {
	t.Parallel()
	s := sample(t)
	notGit := t.TempDir()
	for _, tc := range []struct {
		name   string
		change func(*task.Task)
	}{
		{"missing repository", func(tk *task.Task) { tk.Repo = filepath.Join(t.TempDir(), "gone") }},
		{"directory that is not a repository", func(tk *task.Task) { tk.Repo = notGit }},
		{"unknown commit", func(tk *task.Task) { tk.Commit = strings.Repeat("ab", 20) }},
		{"unknown branch name", func(tk *task.Task) { tk.Commit = "no-such-branch" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &calledAgent{}
			r := newRig(t, agent)
			tk := demoTask(s, "fp-permanent")
			tc.change(&tk)
			_, err := repair(t, r.pipeline, tk)
			if !errors.Is(err, worker.ErrPermanent) {
				t.Fatalf("Repair = %v, want an ErrPermanent", err)
			}
			if agent.called.Load() {
				t.Fatal("the agent ran without a workspace")
			}
		})
	}
}

func TestRepairCancelledIsNotPermanent(t *testing.T) {
	t.Parallel()
	// A workspace that cannot be made because the worker is stopping is not
	// a reason to drop the job.
	s := sample(t)
	r := newRig(t, &calledAgent{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.pipeline.Repair(ctx, demoTask(s, "fp-cancelled"))
	if err == nil || errors.Is(err, worker.ErrPermanent) {
		t.Fatalf("Repair with a cancelled context = %v, want a retryable error", err)
	}
}

// calledAgent records that it ran and changes nothing.
type calledAgent struct{ called atomic.Bool }

func (a *calledAgent) Run(context.Context, *workspace.Workspace, task.Task, io.Writer) (harness.Result, error) {
	a.called.Store(true)
	return harness.Result{Stop: "exit"}, nil
}

// flakyPublisher fails its first call, as GitHub does when it is down.
type flakyPublisher struct {
	worker.Publisher
	calls atomic.Int32
}

func (p *flakyPublisher) Publish(ctx context.Context, pr publish.PullRequest) (string, error) {
	if p.calls.Add(1) == 1 {
		return "", errors.New("publisher unavailable")
	}
	return p.Publisher.Publish(ctx, pr)
}

func TestRepairAfterAFailedPublishIsNotBlockedByItsOwnClaim(t *testing.T) {
	t.Parallel()
	s := sample(t)
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	flaky := &flakyPublisher{Publisher: r.pipeline.Publisher}
	r.pipeline.Publisher = flaky
	tk := demoTask(s, "fp-flaky-publish")

	if _, err := repair(t, r.pipeline, tk); err == nil || errors.Is(err, worker.ErrPermanent) {
		t.Fatalf("first Repair: %v, want a retryable error", err)
	}
	// The retry comes well inside the claim's lifetime: it must publish.
	out, err := repair(t, r.pipeline, tk)
	if err != nil || out.Status != task.StatusPublished {
		t.Fatalf("retry: %s %q, %v; want published", out.Status, out.Reason, err)
	}
	if n := flaky.calls.Load(); n != 2 {
		t.Fatalf("publisher called %d times, want 2", n)
	}
	if prs := r.pullRequests(t); len(prs) != 1 {
		t.Fatalf("pull requests %v, want one", prs)
	}
}

// remotePublisher hands the local publisher a task whose repository is a
// URL, as a report of a repository off GitHub is.
type remotePublisher struct{ worker.Publisher }

func (p remotePublisher) Publish(ctx context.Context, pr publish.PullRequest) (string, error) {
	pr.Task.Repo = "https://git.example/acme/shop.git"
	return p.Publisher.Publish(ctx, pr)
}

// A publishing error no retry can mend (the local publisher and a
// repository that is a URL) is permanent: the task fails at once, rather
// than the whole repair running again on each of nats.max_deliver tries.
func TestRepairWithAPublisherThatCannotDeliverIsPermanent(t *testing.T) {
	s := sample(t)
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	r.pipeline.Publisher = remotePublisher{r.pipeline.Publisher}
	_, err := repair(t, r.pipeline, demoTask(s, "fp-not-local"))
	if !errors.Is(err, worker.ErrPermanent) || !errors.Is(err, publish.ErrNotLocal) {
		t.Fatalf("Repair = %v, want a permanent error naming why the publisher cannot deliver", err)
	}
	if _, ok, _ := r.store.Published(context.Background(), "fp-not-local"); ok {
		t.Fatal("the ledger records it as published")
	}
}

// gatedPublisher holds its first call until release is closed.
type gatedPublisher struct {
	worker.Publisher
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (p *gatedPublisher) Publish(ctx context.Context, pr publish.PullRequest) (string, error) {
	if p.calls.Add(1) == 1 {
		close(p.entered)
		<-p.release
	}
	return p.Publisher.Publish(ctx, pr)
}

// Two deliveries of one job at once (the first lost its heartbeat and the
// job went to a second worker): only one may hold the publish claim, so
// one pull request is published.
func TestConcurrentDeliveriesPublishOnce(t *testing.T) {
	t.Parallel()
	s := sample(t)
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	gated := &gatedPublisher{Publisher: r.pipeline.Publisher, entered: make(chan struct{}), release: make(chan struct{})}
	r.pipeline.Publisher = gated
	tk := demoTask(s, "fp-two-deliveries")

	type result struct {
		out worker.Outcome
		err error
	}
	first := make(chan result, 1)
	go func() {
		out, err := repair(t, r.pipeline, tk)
		first <- result{out, err}
	}()
	testsvc.Receive(t, 5*time.Minute, "the first delivery reaches the publisher", gated.entered)
	// The second delivery of the same task, while the first publishes.
	second, err := repair(t, r.pipeline, tk)
	if err == nil && second.Status == task.StatusPublished && second.Reason != "already published" {
		t.Fatalf("the second delivery published too: %+v", second)
	}
	close(gated.release)
	got := <-first
	if got.err != nil || got.out.Status != task.StatusPublished {
		t.Fatalf("first delivery: %s %q %v", got.out.Status, got.out.Reason, got.err)
	}
	if n := gated.calls.Load(); n != 1 {
		t.Fatalf("publisher called %d times, want 1", n)
	}
	if prs := r.pullRequests(t); len(prs) != 1 {
		t.Fatalf("pull requests %v, want one", prs)
	}
}
