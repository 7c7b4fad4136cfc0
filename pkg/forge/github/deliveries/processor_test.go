package deliveries

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

func TestRunTriagedOnce(t *testing.T) {
	ex := ghtest.WebhookPayloads(t)
	f := newGHFixture(t)
	ctx := context.Background()
	payload := f.runPayload(t, ex, f.failed.ID)
	sub := ingest.Submission{ID: "d-1", Kind: event.Kind, Event: event.WorkflowRun, Payload: payload}
	res, err := f.proc.Process(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r == nil {
		t.Fatalf("no report: %s", res.Note)
	}
	if r.Repo != f.srv.CloneURL("acme", "calc") || r.Commit != f.failed.HeadSHA || r.Good != "1111111111111111111111111111111111111111" || r.Branch != "main" {
		t.Errorf("report %+v", r)
	}
	rep, err := report.Parse(r.Data)
	if err != nil || len(rep.Failures) != 1 || rep.Failures[0].Test != "TestAdd" {
		t.Fatalf("report: %+v, %v", rep, err)
	}
	// The same delivery again (the stream redelivers after a failed
	// triage): it still owns the run.
	if res, err := f.proc.Process(ctx, sub); err != nil || res.Report == nil {
		t.Errorf("the claiming delivery's retry: %+v, %v", res, err)
	}
	// Another delivery of the same run: triaged once.
	res, err = f.proc.Process(ctx, ingest.Submission{ID: "resync:x", Kind: event.Kind, Event: event.WorkflowRun, Payload: payload})
	if err != nil || res.Report != nil {
		t.Errorf("a second delivery of the run: %+v, %v", res, err)
	}
	// Once its triage gave up for good, the run may be taken again.
	res0, _ := f.proc.Process(ctx, sub)
	res0.Release(ctx)
	if res, err := f.proc.Process(ctx, ingest.Submission{ID: "resync:x", Kind: event.Kind, Event: event.WorkflowRun, Payload: payload}); err != nil || res.Report == nil {
		t.Errorf("after a release: %+v, %v", res, err)
	}
}

// TestOutcomes replays the published pull_request_review and
// pull_request closed examples on a pull request that redfix published.
func TestOutcomes(t *testing.T) {
	ex := ghtest.WebhookPayloads(t)
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "outcomes-test")
	p := &Processor{State: st, Log: zaptest.NewLogger(t)}
	ours := func(m map[string]any) {
		ghtest.Object(ghtest.Object(m, "pull_request"), "head")["ref"] = "redfix/0123abcd"
	}
	review := ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "pull_request_review", "submitted"), ours)
	closed := ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "pull_request", "closed"), ours)
	var pr struct {
		Number     int
		Repository struct {
			FullName string `json:"full_name"`
		}
	}
	if err := json.Unmarshal(closed, &pr); err != nil {
		t.Fatal(err)
	}
	deliver := func(name string, payload json.RawMessage) Result {
		t.Helper()
		res, err := p.Process(ctx, ingest.Submission{ID: "d", Kind: event.Kind, Event: name, Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		if res.Report != nil {
			t.Fatalf("%s gave a report to triage", name)
		}
		return res
	}
	// Not published by redfix (yet): recorded nowhere.
	if res := deliver("pull_request", closed); res.Note != "not a published fix" {
		t.Errorf("closing an unknown pull request: %q", res.Note)
	}
	published := time.Date(2019, 5, 15, 15, 0, 0, 0, time.UTC)
	if _, err := st.RecordPublished(ctx, task.Fix{Repo: pr.Repository.FullName, Number: pr.Number, PublishedAt: published}); err != nil {
		t.Fatal(err)
	}
	deliver("pull_request_review", review)
	f, err := st.GetFix(ctx, pr.Repository.FullName, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	// The example's review was submitted at 2019-05-15T15:20:38Z.
	if !f.Reviewed || f.FirstReviewAt.Sub(published) != 20*time.Minute+38*time.Second {
		t.Errorf("after the review: %+v", f)
	}
	changes := ghtest.EditPayload(t, review, func(m map[string]any) { ghtest.Object(m, "review")["state"] = "changes_requested" })
	deliver("pull_request_review", changes)
	// The published closed example is not merged.
	deliver("pull_request", closed)
	if f, _ = st.GetFix(ctx, pr.Repository.FullName, pr.Number); f.State != task.FixClosed || !f.ChangesRequested {
		t.Errorf("after closing: %+v", f)
	}
	deliver("pull_request", ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "pull_request", "reopened"), ours))
	merged := ghtest.EditPayload(t, closed, func(m map[string]any) {
		p := ghtest.Object(m, "pull_request")
		p["merged"], p["merged_at"], p["commits"] = true, "2019-05-15T17:00:00Z", 3
	})
	deliver("pull_request", merged)
	if f, _ = st.GetFix(ctx, pr.Repository.FullName, pr.Number); f.State != task.FixLandedWithEdits {
		t.Errorf("after a merge of a branch with 3 commits: %+v", f)
	}
	land, err := st.LandRate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o := land.Overall; o.Published != 1 || o.Landed != 1 || o.LandedWithEdits != 1 || o.ClosedUnmerged != 0 || o.LandRate == nil || *o.LandRate != 1 || o.MeanSecondsToLand != 2*3600 {
		t.Errorf("land rate: %+v", o)
	}
}

func TestProcessMalformed(t *testing.T) {
	p := &Processor{Log: zaptest.NewLogger(t)}
	_, err := p.Process(context.Background(), ingest.Submission{ID: "d", Kind: event.Kind, Event: "pull_request", Payload: json.RawMessage(`{"action":"closed"}`)})
	if !errors.Is(err, ingest.ErrInvalid) {
		t.Errorf("a payload without a repository: %v, want ErrInvalid", err)
	}
}

func TestEditedCountsRevisions(t *testing.T) {
	for _, tc := range []struct {
		commits, revisions int
		want               bool
	}{
		{1, 0, false},
		{2, 0, true},
		{2, 1, false}, // redfix's commit and its one revision
		{3, 1, true},
		{4, 3, false},
	} {
		pr := &gogithub.PullRequest{Commits: gogithub.Int(tc.commits)}
		if got := edited(pr, tc.revisions); got != tc.want {
			t.Errorf("edited(%d commits, %d revisions) = %v, want %v", tc.commits, tc.revisions, got, tc.want)
		}
	}
}

func TestForkOf(t *testing.T) {
	for _, c := range []struct {
		head, want string
	}{
		{"", ""},
		{"acme/calc", ""},
		{"ACME/Calc", ""},
		{"mallory/calc", "mallory/calc"},
	} {
		run := &gogithub.WorkflowRun{}
		if c.head != "" {
			run.HeadRepository = &gogithub.Repository{FullName: gogithub.String(c.head)}
		}
		if got := ForkOf("acme/calc", run); got != c.want {
			t.Errorf("ForkOf(acme/calc, head %q) = %q, want %q", c.head, got, c.want)
		}
	}
}
