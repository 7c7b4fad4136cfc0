package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/store"
)

// TestOutcomes replays the published pull_request_review and
// pull_request closed examples on a pull request that redfix published.
func TestOutcomes(t *testing.T) {
	ex := examples(t)
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "outcomes-test")
	p := &Processor{State: st, Log: zaptest.NewLogger(t)}
	ours := func(m map[string]any) { obj(obj(m, "pull_request"), "head")["ref"] = "redfix/0123abcd" }
	review := edit(t, example(t, ex, "pull_request_review", "submitted"), ours)
	closed := edit(t, example(t, ex, "pull_request", "closed"), ours)
	var pr struct {
		Number     int
		Repository struct {
			FullName string `json:"full_name"`
		}
	}
	if err := json.Unmarshal(closed, &pr); err != nil {
		t.Fatal(err)
	}
	deliver := func(event string, payload json.RawMessage) Result {
		t.Helper()
		res, err := p.Process(ctx, ingest.Submission{ID: "d", Kind: ingest.KindGitHub, Event: event, Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		if res.Report != nil {
			t.Fatalf("%s gave a report to triage", event)
		}
		return res
	}
	// Not published by redfix (yet): recorded nowhere.
	if res := deliver("pull_request", closed); res.Note != "not a published fix" {
		t.Errorf("closing an unknown pull request: %q", res.Note)
	}
	published := time.Date(2019, 5, 15, 15, 0, 0, 0, time.UTC)
	if _, err := st.RecordPublished(ctx, store.Fix{Repo: pr.Repository.FullName, Number: pr.Number, PublishedAt: published}); err != nil {
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
	changes := edit(t, review, func(m map[string]any) { obj(m, "review")["state"] = "changes_requested" })
	deliver("pull_request_review", changes)
	// The published closed example is not merged.
	deliver("pull_request", closed)
	if f, _ = st.GetFix(ctx, pr.Repository.FullName, pr.Number); f.State != store.FixClosed || !f.ChangesRequested {
		t.Errorf("after closing: %+v", f)
	}
	deliver("pull_request", edit(t, example(t, ex, "pull_request", "reopened"), ours))
	merged := edit(t, closed, func(m map[string]any) {
		p := obj(m, "pull_request")
		p["merged"], p["merged_at"], p["commits"] = true, "2019-05-15T17:00:00Z", 3
	})
	deliver("pull_request", merged)
	if f, _ = st.GetFix(ctx, pr.Repository.FullName, pr.Number); f.State != store.FixLandedWithEdits {
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
	_, err := p.Process(context.Background(), ingest.Submission{ID: "d", Kind: ingest.KindGitHub, Event: "pull_request", Payload: json.RawMessage(`{"action":"closed"}`)})
	if !errors.Is(err, ingest.ErrInvalid) {
		t.Errorf("a payload without a repository: %v, want ErrInvalid", err)
	}
}
