package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/task"
)

const ownSecret = "own-bot-secret-0123"

type recordingPublisher struct{ got PullRequest }

func (p *recordingPublisher) Publish(_ context.Context, pr PullRequest) (string, error) {
	p.got = pr
	return "file:///pr", nil
}

func TestPullRequestsAreRedacted(t *testing.T) {
	rec := &recordingPublisher{}
	p := Redacting{Publisher: rec, Redactor: redact.New(ownSecret)}
	pr := PullRequest{
		Task:         task.Task{ID: "t1", Failures: []task.Failure{{Test: "TestX", Message: "saw " + ownSecret, Output: "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"}}},
		Patch:        "+x := \"AKIAQ3EXAMPLEFAKE7ZK\" // " + ownSecret + "\n",
		Gates:        []task.Gate{{Name: "oracle", Verdict: task.GatePass, Detail: ownSecret}},
		Summary:      "fixed; " + ownSecret,
		Trajectory:   []byte(`{"observation":"` + ownSecret + `"}` + "\n"),
		BlameSubject: ownSecret,
	}
	if _, err := p.Publish(context.Background(), pr); err != nil {
		t.Fatal(err)
	}
	got := rec.got
	all := got.Task.Failures[0].Message + got.Task.Failures[0].Output + got.Patch + got.Gates[0].Detail + got.Summary + string(got.Trajectory) + got.BlameSubject
	if strings.Contains(all, ownSecret) || strings.Contains(all, "ghp_") {
		t.Fatalf("a secret reached the pull request: %s", all)
	}
	if !strings.Contains(got.Patch, "AKIAQ3EXAMPLEFAKE7ZK") {
		t.Fatal("the patch lost more than the bot's own secrets: it would no longer apply")
	}
}
