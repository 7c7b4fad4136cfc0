package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

// TestRevisionOnReview: redfix's pull request gets a review requesting
// changes ("also handle the negative case") from a collaborator with write
// access; a worker continues from the branch with the reviewer's words
// (fenced as data in the prompt), the gates and the judge run again, and
// a second commit that rejects a negative minimum lands on the same
// branch, answered in the thread. The model is scripted: the repair, its
// judgement, the revision, its judgement.
func TestRevisionOnReview(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sample := shopSample(t, ctx)
	edit := func(search, replace string) string {
		args, _ := json.Marshal(map[string]string{"path": "pricing/pricing.go", "blocks": "<<<<<<< SEARCH\n" + search + "\n=======\n" + replace + "\n>>>>>>> REPLACE\n"})
		return string(args)
	}
	const guard = "\tif t.MinQty < 0 {\n\t\treturn fmt.Errorf(\"add tier: minimum %d is negative\", t.MinQty)\n\t}"
	model := llmtest.NewServer(t,
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c1", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c2", "edit", edit("\t\tif qty > t.MinQty {", "\t\tif qty >= t.MinQty {"))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c3", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("c4", "exit", `{"summary":"Restored the inclusive tier threshold."}`)}},
		llmtest.Reply{Content: `{"acceptable": true, "reason": "Restores the at-least threshold."}`},
		// The revision.
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("r1", "edit", edit("\tif t.PercentOff < 0 || t.PercentOff > 100 {", guard+"\n\tif t.PercentOff < 0 || t.PercentOff > 100 {"))}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("r2", "run_tests", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{call("r3", "exit", `{"summary":"AddTier now rejects a tier with a negative minimum."}`)}},
		llmtest.Reply{Content: `{"acceptable": true, "reason": "Rejects negative minimums as the reviewer asked."}`},
	)
	cfg := config.Default()
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = model.URL, "test-key", "test-model"
	cfg.Harness.FeedbackRounds = 0
	svc := startGitHubService(t, ctx, cfg, shopRun(sample))
	tk, _ := published(t, svc.deliverRed(t, ctx, "5b0c1d2e-ab01-11ee-8c90-0242ac120002"))
	pulls := svc.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests", len(pulls))
	}
	pr := pulls[0]
	first, err := svc.srv.Git("acme", "shop", "rev-parse", "refs/heads/"+pr.Head)
	if err != nil {
		t.Fatal(err)
	}
	first = strings.TrimSpace(first)

	// A collaborator with write access requests changes.
	svc.srv.AddUser("wanda")
	svc.srv.SetRole("acme", "shop", "wanda", "write")
	review := ghtest.WebhookExample(t, "pull_request_review", "submitted")
	review["repository"] = svc.srv.RepoJSON("acme", "shop")
	p := review["pull_request"].(map[string]any)
	p["number"], p["html_url"] = pr.Number, tk.PullRequest
	p["head"].(map[string]any)["ref"] = pr.Head
	rv := review["review"].(map[string]any)
	rv["state"], rv["body"] = "changes_requested", "Looks right; also handle the negative case: a tier with a negative minimum must be refused."
	rv["user"].(map[string]any)["login"], rv["user"].(map[string]any)["type"] = "wanda", "User"
	const delivery = "6c1d2e3f-ab01-11ee-8c90-0242ac120002"
	settled := svc.sys.Expect(delivery)
	if code, body := ghtest.Deliver(t, svc.hook, svc.secret, "pull_request_review", delivery, review); code != http.StatusAccepted {
		t.Fatalf("review delivery: %d %s", code, body)
	}
	if _, err := settled.Wait(ctx); err != nil {
		t.Fatal(err)
	}

	// A second commit on the same branch, on top of the first.
	var log string
	testsvc.Poll(t, 6*time.Minute, "a second commit on "+pr.Head, func() bool {
		out, err := svc.srv.Git("acme", "shop", "rev-list", "refs/heads/main..refs/heads/"+pr.Head)
		log = out
		return err == nil && len(strings.Fields(out)) == 2
	})
	commits := strings.Fields(log)
	if parent, _ := svc.srv.Git("acme", "shop", "rev-parse", commits[0]+"^"); strings.TrimSpace(parent) != first {
		t.Errorf("the revision's parent is %s, want the first commit %s (no rewrite)", parent, first)
	}
	diff, err := svc.srv.Git("acme", "shop", "diff", first, commits[0])
	if err != nil || !strings.Contains(diff, "+\tif t.MinQty < 0 {") || strings.Contains(diff, "qty >= t.MinQty") {
		t.Errorf("the second commit does not add the negative guard alone:\n%s", diff)
	}
	if n := len(svc.pulls()); n != 1 {
		t.Errorf("%d pull requests after the revision, want still 1", n)
	}
	// The thread: the acknowledgement, then what changed.
	var answer string
	testsvc.Poll(t, time.Minute, "the revision's answer", func() bool {
		for _, c := range svc.srv.Comments("acme", "shop", pr.Number) {
			if strings.HasPrefix(c.Body, "Revision 1, as @wanda asked: pushed") {
				answer = c.Body
			}
		}
		return answer != ""
	})
	for _, want := range []string{"pricing/pricing.go", "rejects a tier with a negative minimum", fmt.Sprintf("`%s`", pr.Head)} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer lacks %q:\n%s", want, answer)
		}
	}
	// The reviewer's words reached the model fenced as data.
	reqs := model.Requests()
	var saw bool
	for _, r := range reqs {
		for _, m := range r.Messages {
			if strings.Contains(m.Text(), "also handle the negative case") && strings.Contains(m.Text(), "review comment by wanda") {
				saw = true
			}
		}
	}
	if !saw {
		t.Error("the model never saw the reviewer's words as fenced data")
	}
	if n, err := svc.sys.Store.Revisions(ctx, "acme/shop", pr.Number); err != nil || n != 1 {
		t.Errorf("revisions recorded: %d %v", n, err)
	}

	// Commands in comments: from someone who may not write, refused and
	// nothing done; from the collaborator, explained, then closed.
	svc.srv.AddUser("stranger")
	for i, c := range []struct{ user, body, want string }{
		{"stranger", "/redfix close", "Sorry @stranger"},
		{"wanda", "/redfix explain", "Why redfix opened this pull request"},
		{"wanda", "/redfix close", "Closing this pull request, as @wanda asked."},
	} {
		com := svc.srv.AddComment("acme", "shop", pr.Number, c.user, c.body)
		payload := ghtest.WebhookExample(t, "issue_comment", "created")
		payload["repository"], payload["comment"] = svc.srv.RepoJSON("acme", "shop"), svc.srv.CommentJSON("acme", "shop", com)
		payload["issue"].(map[string]any)["number"] = pr.Number
		id := fmt.Sprintf("7d2e3f40-ab01-11ee-8c90-0242ac12000%d", i)
		settled := svc.sys.Expect(id)
		if code, body := ghtest.Deliver(t, svc.hook, svc.secret, "issue_comment", id, payload); code != http.StatusAccepted {
			t.Fatalf("%s: %d %s", c.body, code, body)
		}
		if _, err := settled.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		cs := svc.srv.Comments("acme", "shop", pr.Number)
		if last := cs[len(cs)-1]; !strings.Contains(last.Body, c.want) {
			t.Errorf("%s by %s: the last comment is %q, want it to say %q", c.body, c.user, last.Body, c.want)
		}
		if i == 0 && svc.pulls()[0].State != "open" {
			t.Fatal("a refused close closed the pull request")
		}
	}
	if st := svc.pulls()[0].State; st != "closed" {
		t.Errorf("after the collaborator's close the pull request is %s", st)
	}
}
