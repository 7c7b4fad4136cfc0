package triage

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/forge/inflight"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// newRedisStore is the store production uses, on the embedded Redis.
func newRedisStore(t *testing.T) *store.Store {
	t.Helper()
	return store.New(embeddedtest.Redis(t), fmt.Sprintf("triage-test-%d", time.Now().UnixNano()))
}

// ruleOf is what the task recorded for rule.
func ruleOf(t *testing.T, tk *task.Task, rule string) task.RuleCheck {
	t.Helper()
	if tk == nil {
		t.Fatalf("no task to read rule %s from", rule)
	}
	for _, r := range tk.Rules {
		if r.Rule == rule {
			return r
		}
	}
	t.Errorf("task %s records no %s rule: %+v", tk.ID, rule, tk.Rules)
	return task.RuleCheck{}
}

func TestProcessKeepsTheDailyJobBudget(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	st, queue := newRedisStore(t), &memQueue{}
	tr := New(st, queue, nil, Config{Languages: goOnly, Reruns: 2, WorkDir: t.TempDir(), DailyJobsByRepo: map[string]int{f.Dir: 1}, DailyJobs: 50}, nil)
	day := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tr.now = func() time.Time { return day }
	in := Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Report: report.Result{Failures: []task.Failure{addFailure("1")}}}
	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued {
		t.Fatalf("first report: %+v", outs)
	}
	first := outs[0].TaskID
	if r := ruleOf(t, outs[0].Task, RuleBudget); r.Verdict != task.RulePass || r.Detail != "job 1 of 1 on 2026-11-23 (UTC)" {
		t.Errorf("budget rule: %+v", r)
	}
	if r := ruleOf(t, outs[0].Task, RuleDefaultBranch); r.Verdict != task.RulePass || r.Detail != "the failing commit is its head" {
		t.Errorf("default branch rule: %+v", r)
	}
	if r := ruleOf(t, outs[0].Task, RuleHumanFix); r.Verdict != task.RuleNotChecked || r.Detail != "no forge configured" {
		t.Errorf("human fix rule: %+v", r)
	}
	if n, err := st.DailyJobs(ctx, normalizeRepo(f.Dir), day); err != nil || n != 1 {
		t.Errorf("jobs counted today = %d, %v", n, err)
	}

	// Another failure the same day: dropped before any run, its group
	// left unclaimed.
	other := addFailure("2")
	other.Message = "sum went the wrong way"
	in.Report.Failures = []task.Failure{other}
	outs, err = tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := "daily job budget of " + f.Dir + " used up: 1 jobs queued on 2026-11-23 (UTC)"
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || outs[0].Reason != want || outs[0].TestRuns != 0 {
		t.Fatalf("second report: %+v, want dropped with %q", outs, want)
	}
	if _, _, held, err := st.GroupClaim(ctx, outs[0].Fingerprint); err != nil || held {
		t.Errorf("the dropped group is claimed (%v, %v): it would not be triaged when the budget has room", held, err)
	}
	saved, err := st.GetTask(ctx, outs[0].TaskID)
	if err != nil || saved.Status != task.StatusDropped || saved.Reason != want {
		t.Errorf("saved task = %+v, %v", saved, err)
	}
	if r := ruleOf(t, &saved, RuleBudget); r.Verdict != task.RuleDrop || r.Detail != want {
		t.Errorf("budget rule of the dropped task: %+v", r)
	}

	// The next UTC day has room: the same failure is triaged (and merged
	// into the first task, which owns its blame commit).
	tr.now = func() time.Time { return day.Add(24 * time.Hour) }
	outs, err = tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || strings.Contains(outs[0].Reason, "budget") || !strings.Contains(outs[0].Reason, "as task "+first) {
		t.Errorf("next day: %+v, want merged into %s", outs, first)
	}
	if len(queue.jobs) != 1 {
		t.Errorf("jobs = %d, want 1", len(queue.jobs))
	}
}

func TestProcessDropsWhatTheDefaultBranchFixed(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	good := f.Commit("calc", map[string]string{"go.mod": bisecttest.GoMod, "calc/calc.go": bisecttest.AddGood, "calc/calc_test.go": bisecttest.CalcTest})
	f.Commit("calc: rewrite Add", map[string]string{"calc/calc.go": bisecttest.AddBad})
	failing := f.Commit("docs", map[string]string{"notes.txt": "n\n"})
	fixed := f.Commit("calc: fix Add", map[string]string{"calc/calc.go": bisecttest.AddGood})
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, Reruns: 2, WorkDir: t.TempDir()}, nil)
	in := Input{Repo: f.Dir, Commit: failing, Good: good, Report: report.Result{Failures: []task.Failure{addFailure("1")}}}
	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := "already fixed on main: " + bisecttest.AddTestID + " passed 2/2 runs at its head " + task.Short(fixed)
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || outs[0].Reason != want || outs[0].TestRuns != 4 {
		t.Fatalf("outcomes = %+v, want dropped: %q after 2 runs at the commit and 2 at the head", outs, want)
	}
	if r := ruleOf(t, outs[0].Task, RuleDefaultBranch); r.Verdict != task.RuleDrop || r.Detail != want {
		t.Errorf("default branch rule: %+v", r)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("queued %+v", queue.jobs)
	}

	// A failing commit off the default branch (a pull request's): the
	// head passing says nothing about it.
	if _, err := f.Repo.Git(ctx, "checkout", "-q", "-b", "feature", failing); err != nil {
		t.Fatal(err)
	}
	branchFailing := f.Commit("feature work", map[string]string{"feature.txt": "f\n"})
	if _, err := f.Repo.Git(ctx, "checkout", "-q", "main"); err != nil {
		t.Fatal(err)
	}
	in.Commit, in.Branch = branchFailing, "feature"
	in.Report.Failures = []task.Failure{addFailure("2")}
	in.Report.Failures[0].Message = "sum went the wrong way"
	outs, err = tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusQueued {
		t.Fatalf("failure on a branch: %+v, want queued", outs)
	}
	if r := ruleOf(t, outs[0].Task, RuleDefaultBranch); r.Verdict != task.RuleNotChecked || r.Detail != "the failing commit is not on main" {
		t.Errorf("default branch rule of the branch's failure: %+v", r)
	}
}

func TestProcessDropsABuildTheDefaultBranchFixed(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.BrokenBuildHistory(t)
	rep := ciReport(t, f)
	fixed := f.Commit("calc: round is gone", map[string]string{"calc/calc.go": bisecttest.AddGood})
	tr := New(newMemStore(), &memQueue{}, nil, Config{Languages: goOnly, WorkDir: t.TempDir()}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: shas[8], Good: shas[0], Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	want := "already fixed on main: package example.com/calc/calc builds at its head " + task.Short(fixed)
	if len(outs) != 1 || outs[0].Reason != want {
		t.Fatalf("outcomes = %+v, want %q", outs, want)
	}
}

// A person's open pull request that changes the file the failure points at
// makes the task unneeded; the search runs against the test GitHub, with
// triage checking the repository out from it, as in production.
func TestProcessDropsWhatAPersonIsFixing(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "calc", f.Dir)
	srv.AddToken("ghp_bot", "redfix-bot")
	srv.AddToken("ghp_alice", "alice")
	clients, err := github.New(github.Config{APIURL: srv.APIURL(), Token: "ghp_bot"})
	if err != nil {
		t.Fatal(err)
	}
	// alice's branch changes calc/calc.go.
	if _, err := f.Repo.Git(ctx, "checkout", "-q", "-b", "alice/add", shas[10]); err != nil {
		t.Fatal(err)
	}
	f.Commit("calc: add, the right way", map[string]string{"calc/calc.go": bisecttest.AddGood})
	if _, err := f.Repo.Git(ctx, "checkout", "-q", "main"); err != nil {
		t.Fatal(err)
	}
	if out, err := srv.Git("acme", "calc", "fetch", "-q", f.Dir, "alice/add:alice/add"); err != nil {
		t.Fatalf("push: %v: %s", err, out)
	}
	aliceClients, err := github.New(github.Config{APIURL: srv.APIURL(), Token: "ghp_alice"})
	if err != nil {
		t.Fatal(err)
	}
	alice := github.NewForge(aliceClients)
	pr, err := alice.OpenChangeRequest(ctx, alice.Repo("acme/calc"), forge.NewChangeRequest{Title: "Addition that adds", Head: "alice/add", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	forges := forge.New(github.NewForge(clients))

	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, Reruns: 2, WorkDir: t.TempDir(),
		Checkouts:  &workspace.Mirrors{Dir: t.TempDir(), Auth: forges.GitEnv},
		HumanFixes: inflight.HumanFixes{Forges: forges},
	}, nil)
	in := Input{Repo: srv.HTMLURL("acme", "calc"), Commit: shas[10], Good: shas[0], Report: report.Result{Failures: []task.Failure{addFailure("1")}}}
	outs, err := tr.Process(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := "a pull request by a person is in flight: " + pr.URL + " (by alice, it changes calc/calc.go)"
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || outs[0].Reason != want {
		t.Fatalf("outcomes = %+v, want dropped: %q", outs, want)
	}
	if tk := store.tasks[outs[0].TaskID]; tk.Bisection.Blame != shas[6] {
		t.Errorf("dropped task's bisection = %+v: the rule runs after the blame is known", tk.Bisection)
	}
	if r := ruleOf(t, outs[0].Task, RuleHumanFix); r.Verdict != task.RuleDrop || r.Detail != want {
		t.Errorf("human fix rule: %+v", r)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("queued %+v", queue.jobs)
	}

	// Without GitHub for the repository (a local path), the rule is not
	// checked and the task is queued.
	in.Repo = f.Dir
	in.Report.Failures[0].Message = "sum went the wrong way"
	if outs, err = tr.Process(ctx, in); err != nil || len(outs) != 1 || outs[0].Status != task.StatusQueued {
		t.Fatalf("local repository: %+v, %v", outs, err)
	}
	if r := ruleOf(t, outs[0].Task, RuleHumanFix); r.Verdict != task.RuleNotChecked || r.Detail != "no configured forge serves the repository" {
		t.Errorf("human fix rule of a local repository: %+v", r)
	}
}
