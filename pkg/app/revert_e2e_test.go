package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/server"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// TestGitHubRevertWhenRepairFails: the scripted model gives up at once,
// so the repair produces nothing that passes the gates; triage's culprit
// is recent and found with confidence, so redfix opens a revert pull
// request on the default branch's head (which moved past the red commit):
// its branch holds exactly `git revert` of the culprit, the body carries
// the evidence, the label, and the culprit's author and the test's code
// owner are asked for review. A second request for the same culprit (the
// /redfix revert path) opens nothing more; the stats count a revert and no
// fix.
func TestGitHubRevertWhenRepairFails(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sample := shopSample(t, ctx)
	// The default branch moves on past the red commit, touching none of
	// the culprit's files: who owns the pricing tests.
	if err := os.WriteFile(filepath.Join(sample.Dir, "CODEOWNERS"), []byte("/pricing/ @grace-h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	newHead, err := gitrepo.Repo{Dir: sample.Dir}.CommitAll(ctx, "codeowners: the pricing package is Grace's")
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewServerFunc(t, func(int, llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolCall{call("x", "exit", `{"summary":"I could not find the cause."}`)}}
	})
	cfg := config.Default()
	cfg.LLM.BaseURL, cfg.LLM.APIKey, cfg.LLM.Model = model.URL, "test-key", "test-model"
	cfg.Harness.FeedbackRounds = 0
	cfg.Revert.MinConfidence = 0.6
	svc := startGitHubService(t, ctx, cfg, shopRun(sample))
	svc.srv.AddUser("linus-p", "linus@shop.example")
	svc.srv.AddUser("grace-h", "grace@shop.example")

	tasks := svc.deliverRed(t, ctx, "5b1c0e10-a9b1-11ee-8c90-0242ac120002")
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want 1", len(tasks))
	}
	tk := tasks[0]
	culprit := sample.Commits[3]
	if tk.Bisection.Blame != culprit || tk.Status != task.StatusPublished || !strings.HasPrefix(tk.Reason, "reverted the culprit") {
		t.Fatalf("task: %s %q, blame %s (confidence %.3f), want the revert of %s published", tk.Status, tk.Reason, tk.Bisection.Blame, tk.Bisection.Confidence, culprit)
	}
	pulls := svc.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want the revert alone", len(pulls))
	}
	pr := pulls[0]
	if !strings.HasSuffix(tk.PullRequest, "/pull/1") || pr.Head != publish.RevertBranch(culprit) || pr.Base != "main" {
		t.Errorf("pull request %s: %s into %s", tk.PullRequest, pr.Head, pr.Base)
	}
	// The branch is exactly one commit on the default branch's head: the
	// culprit's file put back as it was before it.
	if out, err := svc.srv.Git("acme", "shop", "rev-list", "--parents", "main.."+pr.Head); err != nil || len(strings.Fields(out)) != 2 || strings.Fields(out)[1] != newHead {
		t.Errorf("the branch's commits over main: %q %v, want one whose parent is %s", out, err, newHead)
	}
	if out, _ := svc.srv.Git("acme", "shop", "diff", "--name-only", "main", pr.Head); strings.TrimSpace(out) != "pricing/pricing.go" {
		t.Errorf("the revert changes %q, want pricing/pricing.go alone", out)
	}
	if out, err := svc.srv.Git("acme", "shop", "diff", culprit+"^", pr.Head, "--", "pricing/pricing.go"); err != nil || out != "" {
		t.Errorf("the revert does not put pricing.go back as before the culprit: %v\n%s", err, out)
	}
	if !strings.HasPrefix(pr.Title, `Revert "pricing: keep tiers sorted`) {
		t.Errorf("title %q", pr.Title)
	}
	for _, want := range []string{"Why a revert:", "the repair produced nothing that passed the gates", "TestVolumeDiscount", task.Short(culprit),
		"Triage's confidence in the culprit", "The failing tests pass at the revert", publish.Marker(tk.Fingerprint)} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("the body lacks %q:\n%s", want, pr.Body)
		}
	}
	if !slices.Contains(pr.Labels, publish.RevertLabel) {
		t.Errorf("labels %v", pr.Labels)
	}
	slices.Sort(pr.Reviewers)
	if !slices.Equal(pr.Reviewers, []string{"grace-h", "linus-p"}) {
		t.Errorf("reviewers %v, want the culprit's author and the test's owner", pr.Reviewers)
	}

	// Asked again (as /redfix revert does): the culprit's revert, not a
	// second one.
	mirrors := &workspace.Mirrors{Dir: filepath.Join(t.TempDir(), "mirrors"), Auth: svc.sys.Forges.GitEnv}
	drivers, err := languages(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	rv := newReverter(cfg, svc.sys.Store, svc.sys.Forges, publish.NewForge(svc.sys.Forges, mirrors, drivers, zaptest.NewLogger(t)), mirrors, drivers, zaptest.NewLogger(t))
	id, err := forge.RepoOf(tk.Repo)
	if err != nil {
		t.Fatal(err)
	}
	again, err := rv.OpenRevert(ctx, id, tk.Fingerprint)
	if err != nil || again != tk.PullRequest {
		t.Errorf("a second revert: %q %v, want the first, %s", again, err, tk.PullRequest)
	}
	if n := len(svc.srv.CallsTo("POST", "/repos/{owner}/{repo}/pulls")); n != 1 {
		t.Errorf("%d pull requests created, want 1", n)
	}

	// The stats count the revert apart from fixes.
	var stats server.Stats
	if err := json.Unmarshal([]byte(get(t, strings.TrimSuffix(svc.hook, "/github/webhook")+"/stats")), &stats); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]task.LandStats{}
	if stats.Land != nil {
		for _, k := range stats.Land.Kinds {
			kinds[k.Kind] = k
		}
	}
	if kinds[task.KindRevert].Published != 1 || kinds[task.KindRevert].Open != 1 || kinds[task.KindFix].Published != 0 {
		t.Errorf("stats by kind: %+v", kinds)
	}
	if page := get(t, strings.TrimSuffix(svc.hook, "/api/v1/github/webhook")+"/"); !strings.Contains(page, `<td>reverts</td><td class="n">1</td>`) ||
		!strings.Contains(page, `<td>fixes</td><td class="n">0</td>`) {
		t.Errorf("the dashboard does not show the revert apart from fixes")
	}
}
