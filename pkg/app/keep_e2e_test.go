package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/keep"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/server"
	"github.com/redfix/redfix/pkg/task"
)

// TestKeepingPullRequestsTrue: the bot's pass over its open pull requests
// (System.Keeper, what `bot serve` schedules) against the test GitHub, on
// the bot's pull request fixing the sample's red commit. The default
// branch moves by an unrelated commit: the pull request, still needed and
// still applying, is left alone. It moves by a commit that rewrites the
// line the fix changes, without fixing it: the pull request is closed with
// a comment naming the conflicting path. A person reopens it and lands
// their own fix: the next pass closes it saying the failing test passes
// on the default branch without it. The stats, /metrics and the dashboard
// count the closings by the bot, once each.
func TestKeepingPullRequestsTrue(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sample := shopSample(t, ctx)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Harness.FeedbackRounds = 0
	svc := startGitHubService(t, ctx, cfg, shopRun(sample))
	// The bot's pull request: the repair of the sample's red commit,
	// published by redfix's GitHub publisher and recorded as the worker
	// records it (the repair itself, triage to gates, is
	// TestGitHubEndToEnd's).
	local := gitrepo.Repo{Dir: sample.Dir}
	replaceIn(t, sample.Dir, "pricing/pricing.go", "if qty > t.MinQty {", "if qty >= t.MinQty {")
	patch, err := local.Diff(ctx)
	if err != nil || patch == "" {
		t.Fatalf("the fix's patch: %q, %v", patch, err)
	}
	if _, err := local.Git(ctx, "checkout", "-q", "--", "."); err != nil {
		t.Fatal(err)
	}
	tk := task.Task{ID: "t-keep", Fingerprint: "fp-keep", Repo: svc.srv.HTMLURL("acme", "shop"), Commit: sample.Head, Status: task.StatusPublished,
		Failures: []task.Failure{{Package: "example.com/shop/pricing", Test: "TestVolumeDiscount"}}, CreatedAt: time.Now().UTC()}
	pubCfg := cfg
	pubCfg.Checkouts.MirrorDir = t.TempDir()
	drivers, err := languages(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	pub := publish.NewForge(svc.sys.Forges, NewMirrors(pubCfg, svc.sys.Forges), drivers, zaptest.NewLogger(t))
	if tk.PullRequest, err = pub.Publish(ctx, publish.PullRequest{Task: tk, Patch: patch, Summary: "Restored the inclusive tier threshold."}); err != nil {
		t.Fatal(err)
	}
	pulls := svc.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests", len(pulls))
	}
	pr := pulls[0]
	if err := svc.sys.Store.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.sys.Store.RecordPublished(ctx, task.Fix{Repo: "acme/shop", Number: pr.Number, URL: tk.PullRequest, TaskID: tk.ID, Fingerprint: tk.Fingerprint}); err != nil {
		t.Fatal(err)
	}
	keeper, err := svc.sys.Keeper(cfg)
	if err != nil || keeper == nil {
		t.Fatalf("keeper: %v, %v", keeper, err)
	}
	// land commits a change of the sample's files on the test GitHub's
	// default branch, as a person's push would.
	land := func(file, old, new, msg string) string {
		t.Helper()
		replaceIn(t, sample.Dir, file, old, new)
		sha, err := local.CommitAll(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := svc.srv.Git("acme", "shop", "fetch", "-q", sample.Dir, "+refs/heads/main:refs/heads/main"); err != nil {
			t.Fatalf("push %s: %v: %s", msg, err, out)
		}
		return sha
	}
	pass := func(want keep.Counts) {
		t.Helper()
		if c, err := keeper.Pass(ctx); err != nil || c != want {
			t.Fatalf("pass: %+v, %v; want %+v", c, err, want)
		}
	}
	state := func() string { return svc.pulls()[0].State }
	lastComment := func() string {
		cs := svc.srv.Comments("acme", "shop", pr.Number)
		if len(cs) == 0 {
			return ""
		}
		return cs[len(cs)-1].Body
	}
	before := lastComment()

	// 1. An unrelated commit: still failing, still applying: left alone.
	land("README.md", "# shop", "# shop, the sample", "docs: name the sample")
	pass(keep.Counts{Open: 1})
	if state() != "open" || lastComment() != before {
		t.Fatalf("an unrelated commit touched the pull request: %s, %q", state(), lastComment())
	}

	// 2. The fixed line rewritten, still wrong: closed, naming the path.
	land("pricing/pricing.go", "if qty > t.MinQty {", "if qty > t.MinQty { // the largest tier the order passes", "pricing: say what discount looks for")
	pass(keep.Counts{Open: 1, Conflicts: 1})
	if state() != "closed" {
		t.Fatalf("the conflicting pull request is %s", state())
	}
	if c := lastComment(); !strings.Contains(c, "no longer applies") || !strings.Contains(c, "`pricing/pricing.go`") {
		t.Errorf("the closing comment does not name the conflict: %s", c)
	}
	// GitHub tells of the closing too: counted once.
	hook := func(action, id string) {
		t.Helper()
		payload := ghtest.WebhookExample(t, "pull_request", action)
		p := payload["pull_request"].(map[string]any)
		p["number"], p["html_url"], p["merged"], p["state"] = pr.Number, tk.PullRequest, false, map[string]string{"closed": "closed"}[action]
		if action == "reopened" {
			p["state"], p["closed_at"] = "open", nil
		}
		p["head"].(map[string]any)["ref"] = pr.Head
		payload["number"], payload["repository"] = pr.Number, svc.srv.RepoJSON("acme", "shop")
		settled := svc.sys.Expect(id)
		if code, body := ghtest.Deliver(t, svc.hook, svc.secret, "pull_request", id, payload); code != http.StatusAccepted {
			t.Fatalf("%s delivery: %d %s", action, code, body)
		}
		if _, err := settled.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	hook("closed", "9f405162-ab01-11ee-8c90-0242ac120002")
	if f, err := svc.sys.Store.GetFix(ctx, "acme/shop", pr.Number); err != nil || f.State != task.FixClosed || f.ClosedByBot != task.CloseConflict {
		t.Errorf("the fix's record after the conflict: %+v %v", f, err)
	}

	// 3. A person reopens it, then lands their own fix: closed as fixed.
	svc.srv.Lock()
	pr.State = "open"
	svc.srv.Unlock()
	hook("reopened", "a0516273-ab01-11ee-8c90-0242ac120002")
	land("pricing/pricing.go", "if qty > t.MinQty {", "if qty >= t.MinQty {", "pricing: an order of exactly the minimum gets the tier")
	pass(keep.Counts{Open: 1, Fixed: 1})
	if state() != "closed" {
		t.Fatalf("after the person's fix the pull request is %s", state())
	}
	if c := lastComment(); !strings.Contains(c, "pass on `main`") || !strings.Contains(c, "someone fixed the failure") {
		t.Errorf("the closing comment does not say why: %s", c)
	}
	bot := strings.TrimSuffix(svc.hook, "/api/v1/github/webhook")
	var stats server.Stats
	if err := json.Unmarshal([]byte(get(t, bot+"/api/v1/stats")), &stats); err != nil {
		t.Fatal(err)
	}
	if o := stats.Land.Overall; o.Published != 1 || o.ClosedUnmerged != 1 || o.ClosedByBot != 1 || o.Open != 0 {
		t.Errorf("stats: %+v", o)
	}
	if m := get(t, bot+"/metrics"); !strings.Contains(m, `redfix_fixes_closed_by_bot_total{repository="acme/shop"} 1`) {
		t.Error("/metrics does not count the closing by the bot")
	}
	if page := get(t, bot+"/"); !strings.Contains(page, "1 closed unmerged (1 by redfix itself") {
		t.Error("the dashboard does not show the closing by the bot")
	}
	if f, err := svc.sys.Store.GetFix(ctx, "acme/shop", pr.Number); err != nil || f.ClosedByBot != task.CloseFixed {
		t.Errorf("the fix's record after the person's fix: %+v %v", f, err)
	}
	pass(keep.Counts{}) // nothing open is left
}

// replaceIn replaces old by new in dir's file.
func replaceIn(t *testing.T, dir, file, old, new string) {
	t.Helper()
	path := filepath.Join(dir, file)
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), old) {
		t.Fatalf("%s lacks %q: %v", file, old, err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
