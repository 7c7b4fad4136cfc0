package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// TestGitHubPublishAsksTheRepositorysReviewersAndLabels: the reviewers and
// labels a repository's .redfix.yaml names are asked for on top of
// redfix's own (a team only of the repository's owner).
func TestGitHubPublishAsksTheRepositorysReviewersAndLabels(t *testing.T) {
	f := newGHFixture(t)
	f.srv.AddUser("alice")
	pub, _ := f.publisher(t)
	pr := f.pr(task.GateNotRun)
	pr.Reviewers = []string{"alice", f.owner + "/payments", "elsewhere/team"}
	pr.Labels = []string{"bot-fix"}
	if _, err := pub.Publish(context.Background(), pr); err != nil {
		t.Fatal(err)
	}
	pulls := f.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	p := pulls[0]
	if strings.Join(p.Labels, ",") != Label+",bot-fix,"+UnreviewedLabel {
		t.Errorf("labels %v; want %s, bot-fix and %s", p.Labels, Label, UnreviewedLabel)
	}
	if strings.Join(p.Reviewers, ",") != "jane,calc-owner,alice" || strings.Join(p.TeamReviewers, ",") != "calc-team,payments" {
		t.Errorf("reviewers %v, teams %v; want the file's alice and payments after redfix's own", p.Reviewers, p.TeamReviewers)
	}
}
