package event_test

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

// TestIssueCommentDelivery decodes GitHub's published issue_comment
// examples: a comment that is no command is skipped, the same comment
// saying "/redfix retry" is acted on, an edited or deleted one is not.
func TestIssueCommentDelivery(t *testing.T) {
	ex := ghtest.WebhookPayloads(t)
	if !event.Known(event.IssueComment) {
		t.Fatal("issue_comment is not a known event")
	}
	created := ghtest.WebhookPayload(t, ex, "issue_comment", "created")
	d, err := event.Decode(event.IssueComment, created)
	if err != nil {
		t.Fatal(err)
	}
	if d.Comment == nil || d.Repo == "" || d.Comment.GetIssue().GetNumber() == 0 || d.Comment.GetComment().GetID() == 0 {
		t.Fatalf("decoded %+v", d)
	}
	if skip := d.Skip(event.Filter{}); !strings.Contains(skip, "not a /redfix command") {
		t.Errorf("a comment that is no command: skip %q", skip)
	}
	cmd := ghtest.EditPayload(t, created, func(m map[string]any) { ghtest.Object(m, "comment")["body"] = "/redfix retry" })
	if d, err = event.Decode(event.IssueComment, cmd); err != nil {
		t.Fatal(err)
	}
	if skip := d.Skip(event.Filter{}); skip != "" {
		t.Errorf("a command is skipped: %s", skip)
	}
	if skip := d.Skip(event.Filter{Allow: []string{"someone/else"}}); !strings.Contains(skip, "allowlist") {
		t.Errorf("a command on a repository not allowed: skip %q", skip)
	}
	edited := ghtest.EditPayload(t, cmd, func(m map[string]any) { m["action"] = "edited" })
	if d, err = event.Decode(event.IssueComment, edited); err != nil {
		t.Fatal(err)
	}
	if skip := d.Skip(event.Filter{}); !strings.Contains(skip, "edited") {
		t.Errorf("an edited command: skip %q", skip)
	}
	if _, err := event.Decode(event.IssueComment, []byte(`{"action":"created","repository":{"full_name":"a/b"}}`)); err == nil {
		t.Error("a payload without issue or comment decoded")
	}
}
