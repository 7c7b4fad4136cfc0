package deliveries

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/task"
)

// heard keeps what the processor told the commands.
type heard struct {
	comments []forge.Comment
	reviews  []forge.Review
}

func (h *heard) Comment(_ context.Context, c forge.Comment) (string, error) {
	h.comments = append(h.comments, c)
	return "heard", nil
}

func (h *heard) Reviewed(_ context.Context, rv forge.Review) (string, error) {
	h.reviews = append(h.reviews, rv)
	return "heard", nil
}

// TestCommandsInTheForgesWords: GitHub's published issue_comment and
// pull_request_review examples reach the commands in the forge's words:
// the repository as the configured GitHub serves it (its host and
// owner/name), the number, whether the thread is a pull request's, the
// author (an App's account a bot), the words, the review's state and time.
func TestCommandsInTheForgesWords(t *testing.T) {
	ex := ghtest.WebhookPayloads(t)
	f := newGHFixture(t)
	ctx := context.Background()
	h := &heard{}
	f.proc.Commands = h
	deliver := func(name string, payload json.RawMessage) {
		t.Helper()
		if res, err := f.proc.Process(ctx, ingest.Submission{ID: "d", Kind: event.Kind, Event: name, Payload: payload}); err != nil || res.Note != "heard" && res.Note != "fix reviewed; heard" {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
	}
	repo := f.proc.Forge.Repo("acme/calc")
	comment := ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "issue_comment", "created"), func(m map[string]any) {
		m["repository"] = f.srv.RepoJSON("acme", "calc")
		ghtest.Object(m, "comment")["body"] = "/redfix retry"
	})
	var c struct {
		Issue struct {
			Number      int
			PullRequest any `json:"pull_request"`
		}
		Comment struct {
			ID   int64
			User struct{ Login string }
		}
	}
	if err := json.Unmarshal(comment, &c); err != nil {
		t.Fatal(err)
	}
	deliver(event.IssueComment, comment)
	deliver(event.IssueComment, ghtest.EditPayload(t, comment, func(m map[string]any) {
		ghtest.Object(ghtest.Object(m, "comment"), "user")["type"] = "Bot"
	}))
	if len(h.comments) != 2 {
		t.Fatalf("comments heard: %+v", h.comments)
	}
	want := forge.Comment{Repo: repo, Number: c.Issue.Number, OnChangeRequest: c.Issue.PullRequest != nil, ID: c.Comment.ID, Author: forge.User{Login: c.Comment.User.Login}, Body: "/redfix retry"}
	if got := h.comments[0]; got != want || got.Repo.Host == "" {
		t.Errorf("comment heard as %+v, want %+v", got, want)
	}
	if !h.comments[1].Author.Bot {
		t.Errorf("an App's comment heard as a person's: %+v", h.comments[1].Author)
	}

	review := ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "pull_request_review", "submitted"), func(m map[string]any) {
		m["repository"] = f.srv.RepoJSON("acme", "calc")
		ghtest.Object(ghtest.Object(m, "pull_request"), "head")["ref"] = "redfix/0123abcd"
		rv := ghtest.Object(m, "review")
		rv["state"], rv["body"] = "CHANGES_REQUESTED", "and the zero case"
	})
	var r struct {
		PullRequest struct{ Number int } `json:"pull_request"`
		Review      struct {
			User        struct{ Login string }
			SubmittedAt time.Time `json:"submitted_at"`
		}
	}
	if err := json.Unmarshal(review, &r); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.RecordPublished(ctx, task.Fix{Repo: "acme/calc", Number: r.PullRequest.Number, PublishedAt: r.Review.SubmittedAt.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	deliver(event.PullRequestReview, review)
	if len(h.reviews) != 1 {
		t.Fatalf("reviews heard: %+v", h.reviews)
	}
	wantReview := forge.Review{Repo: repo, Number: r.PullRequest.Number, Author: forge.User{Login: r.Review.User.Login}, State: forge.ReviewChangesRequested, Body: "and the zero case", At: r.Review.SubmittedAt}
	if got := h.reviews[0]; got.Repo != wantReview.Repo || got.Number != wantReview.Number || got.Author != wantReview.Author || got.State != wantReview.State || got.Body != wantReview.Body || !got.At.Equal(wantReview.At) {
		t.Errorf("review heard as %+v, want %+v", got, wantReview)
	}
}
