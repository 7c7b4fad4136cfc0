package history

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

// A settled repair is kept once: its status, the rounds the gates rejected,
// its tokens and cost, and for a new pull request the time to it from its
// report's arrival; a
// redelivered job whose pull request exists counts nothing again.
func TestHistoryRecordsRepairs(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "history-test")
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	h := Recorder{Store: st, Now: func() time.Time { return now }, Log: zaptest.NewLogger(t)}
	tk := task.Task{ID: "t1", Repo: "https://github.com/acme/shop", CreatedAt: now.Add(-5 * time.Minute), Failures: []task.Failure{{Test: "TestX"}}}
	spend := llm.Spend{Calls: 3, Usage: llm.Usage{PromptTokens: 900, CompletionTokens: 100}, CostUSD: 0.0125}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The report reached redfix 20 minutes before; triage made the task
	// 5 minutes before.
	h.TriageDecided(ctx, ingest.Submission{ID: "s1", Repo: tk.Repo, Received: now.Add(-20 * time.Minute)}, triage.Outcome{TaskID: "t1", Status: task.StatusQueued})
	// A redelivery of the report later does not move the start.
	h.TriageDecided(ctx, ingest.Submission{ID: "s1", Repo: tk.Repo, Received: now.Add(-time.Minute)}, triage.Outcome{TaskID: "t1", Status: task.StatusQueued})
	// An attempt that is retried counts the rounds the gates rejected in
	// it, and nothing else; the attempt that settles counts its own.
	must(h.RecordRepair(ctx, tk, worker.Outcome{Rejections: map[string]int{"revert": 1}, Spend: spend}))
	must(h.RecordRepair(ctx, tk, worker.Outcome{Status: task.StatusNoPatch, Spend: spend,
		Gates: []task.Gate{{Name: "oracle", Verdict: task.GateFail}, {Name: "static", Verdict: task.GatePass}}, Rejections: map[string]int{"revert": 1, "oracle": 1}}))
	must(h.RecordRepair(ctx, tk, worker.Outcome{Status: task.StatusPublished, PullRequest: "https://github.com/acme/shop/pull/3", Spend: spend}))
	must(h.RecordRepair(ctx, tk, worker.Outcome{Status: task.StatusPublished, PullRequest: "https://github.com/acme/shop/pull/3", Reason: "already published"}))

	days, err := st.Daily(ctx, now, now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range days[0].Counts {
		if c.Repo != "acme/shop" {
			t.Errorf("counted under %q, want acme/shop", c.Repo)
		}
		got[c.Event+"/"+c.Class] = c.N
	}
	want := map[string]int64{"queued/": 2, "no_patch/": 1, "published/": 1, "gate_rejected/oracle": 1, "gate_rejected/revert": 2, "repaired/": 2, "tokens/": 2000, "cost_micro_usd/": 25000}
	if len(got) != len(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s = %d, want %d", k, got[k], n)
		}
	}
	times, err := st.TimesToPR(ctx, now, now)
	if err != nil || len(times) != 1 || times[0] != 1200 {
		t.Errorf("times to pull request: %v, %v; want [1200], from the report's arrival", times, err)
	}
	prs, err := st.RecentPullRequests(ctx, 10)
	if err != nil || len(prs) != 1 || prs[0].TaskID != "t1" || prs[0].Repo != "acme/shop" || prs[0].Title == "" {
		t.Errorf("recent pull requests: %+v, %v", prs, err)
	}
}
