package forgetest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge"
)

// testReviews: the culprit's author is known by the forge's account of
// their commit, and a review is asked of them.
func testReviews(t *testing.T, b Backend) {
	ctx := context.Background()
	f := newFixture(t, b, "reviews")
	rv := need[Reviews](t, f.d)
	cr := need[ChangeRequests](t, f.d)
	b.AddUser(t, f.repo, "alice", "alice@example.com", true)
	sha := f.branch(t, "alice/culprit", "calc/calc.go", "alice")
	f.push(t, sha, "alice/culprit")
	if u, err := rv.CommitAuthor(ctx, f.repo, sha); err != nil || !strings.EqualFold(u.Login, "alice") || u.Bot {
		t.Errorf("the author of alice's commit: %+v, %v", u, err)
	}
	if u, err := rv.CommitAuthor(ctx, f.repo, f.main); err != nil || u.Login != "" {
		t.Errorf("the author of a commit by no account of the forge: %+v, %v; want none", u, err)
	}
	opened, _ := f.open(t, cr, "redfix/reviewed", "calc/calc.go")
	if err := rv.RequestReviews(ctx, f.repo, opened.Number, []string{"alice"}); err != nil {
		t.Fatal(err)
	}
	if got := b.Reviewers(t, f.repo, opened.Number); !slices.ContainsFunc(got, func(s string) bool { return strings.EqualFold(s, "alice") }) {
		t.Errorf("reviewers %v; want alice", got)
	}
}

// testCommands: who may write is the forge's answer; a command's comment
// comes in with its repository, change request and author, is
// acknowledged, and answered in the thread.
func testCommands(t *testing.T, b Backend) {
	ctx := context.Background()
	f := newFixture(t, b, "commands")
	cmds := need[Commands](t, f.d)
	cr := need[ChangeRequests](t, f.d)
	opened, _ := f.open(t, cr, "redfix/commanded", "calc/calc.go")
	b.AddUser(t, f.repo, "maya", "maya@example.com", true)
	b.AddUser(t, f.repo, "rex", "rex@example.com", false)
	for login, write := range map[string]bool{"maya": true, "rex": false} {
		if p, err := cmds.Permission(ctx, f.repo, login); err != nil || p.Write != write {
			t.Errorf("%s's permission %+v, %v; want write %v", login, p, err, write)
		}
	}
	c := b.Comment(t, f.repo, opened.Number, "maya", "/redfix explain")
	if !c.Repo.Same(f.repo) || c.Number != opened.Number || !c.OnChangeRequest || c.Author.Login != "maya" || c.Author.Bot || c.Body != "/redfix explain" {
		t.Errorf("the comment came in as %+v", c)
	}
	if err := cmds.Acknowledge(ctx, c); err != nil {
		t.Fatal(err)
	}
	if !b.Acknowledged(t, c) {
		t.Error("the comment was not acknowledged")
	}
	url, err := cmds.Comment(ctx, f.repo, opened.Number, "Explained.")
	if err != nil || url == "" {
		t.Fatalf("answer: %q, %v", url, err)
	}
	if got := b.Comments(t, f.repo, opened.Number); !slices.Contains(got, "Explained.") {
		t.Errorf("comments %q; want the answer", got)
	}
	if _, err := cmds.Comment(ctx, f.repo, opened.Number+100, "nowhere"); err == nil {
		t.Error("a comment on a change request that does not exist was taken")
	}
}

// testChecks: a check on a commit is created, listed by name, completed,
// said again in place, and one of another name stands beside it.
func testChecks(t *testing.T, b Backend) {
	ctx := context.Background()
	f := newFixture(t, b, "checks")
	ch := need[Checks](t, f.d)
	const name = "redfix / triage"
	id, err := ch.CreateCheck(ctx, f.repo, forge.Check{Name: name, Commit: f.main, Status: forge.CheckInProgress})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := ch.CommitChecks(ctx, f.repo, f.main, name)
	if err != nil || len(listed) != 1 || listed[0].ID != id || listed[0].Status != forge.CheckInProgress || listed[0].Commit != f.main {
		t.Fatalf("listed %+v, %v", listed, err)
	}
	done := forge.Check{Name: name, Conclusion: forge.ConclusionNeutral, Title: "reliable failure", Summary: "TestAdd fails here", DetailsURL: "https://example.com/t/1", ExternalID: "t1,t2"}
	if err := ch.UpdateCheck(ctx, f.repo, id, done); err != nil {
		t.Fatal(err)
	}
	listed, err = ch.CommitChecks(ctx, f.repo, f.main, name)
	if err != nil || len(listed) != 1 {
		t.Fatalf("listed %+v, %v", listed, err)
	}
	if g := listed[0]; g.Status != forge.CheckCompleted || g.Conclusion != forge.ConclusionNeutral || g.Summary != done.Summary || g.Title != done.Title || g.ExternalID != done.ExternalID || g.DetailsURL != done.DetailsURL {
		t.Errorf("after the update: %+v", g)
	}
	done.Commit, done.Summary = f.main, "said again"
	if again, err := forge.UpsertCheck(ctx, ch, f.repo, done); err != nil || again != id {
		t.Errorf("said again: check %d, %v; want %d updated", again, err, id)
	}
	if _, err := ch.CreateCheck(ctx, f.repo, forge.Check{Name: "redfix / .redfix.yaml", Commit: f.main, Conclusion: forge.ConclusionActionRequired, Title: "invalid", Summary: "bad"}); err != nil {
		t.Fatal(err)
	}
	if all, err := ch.CommitChecks(ctx, f.repo, f.main, ""); err != nil || len(all) != 2 {
		t.Errorf("all checks: %+v, %v; want 2", all, err)
	}
	if err := ch.UpdateCheck(ctx, f.repo, id, forge.Check{Conclusion: forge.ConclusionSuccess}); err == nil {
		t.Error("an update without a name was taken")
	}
}
