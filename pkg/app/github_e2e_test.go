package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/server"
	"github.com/redfix/redfix/pkg/task"
)

// plantedToken looks like a GitHub token and is planted in a failing test's
// output: it must reach neither the pull request nor the trajectory.
const plantedToken = "ghp_R3dF1xPl4nt3dT0k3nXXXXXXXXXXXXXXXXXX"

// plant adds a line with the token to the output of the report's first
// failing test.
func plant(t *testing.T, rep []byte) []byte {
	t.Helper()
	res, err := report.Parse(rep)
	if err != nil || len(res.Failures) == 0 {
		t.Fatalf("sample report: %v", err)
	}
	f := res.Failures[0]
	line, _ := json.Marshal(map[string]string{"Action": "output", "Package": f.Package, "Test": f.Test, "Output": "    auth.go:12: using token " + plantedToken + "\n"})
	var out bytes.Buffer
	planted := false
	for _, l := range bytes.SplitAfter(rep, []byte("\n")) {
		out.Write(l)
		if !planted && bytes.Contains(l, []byte(`"Action":"run"`)) && bytes.Contains(l, []byte(`"Test":"`+f.Test+`"`)) {
			out.Write(line)
			out.WriteByte('\n')
			planted = true
		}
	}
	if !planted {
		t.Fatalf("no run event for %s in the sample report", f.Test)
	}
	return out.Bytes()
}

// testReadToken is the read token of the bots the tests read from.
const testReadToken = "test-read-token"

// get reads url with testReadToken (which a bot that reads open ignores).
func get(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testReadToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestGitHubEndToEnd: a red run on GitHub in, a pull request out, its
// outcome back, the land rate shown. Real NATS and Redis (embedded), the
// test GitHub (every call checked against GitHub's REST description) and
// its git server, triage and the worker.
func TestGitHubEndToEnd(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const secret = "e2e webhook secret"

	sample := shopSample(t, ctx)
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "shop", sample.Dir)
	app := srv.NewApp("redfix")
	srv.Install("acme", "acme/shop")
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	srv.AddRun("acme", "shop", ghtest.WorkflowRun{Name: "CI", HeadBranch: "main", HeadSHA: sample.Good, Conclusion: "success", CreatedAt: t0.Add(-time.Hour)})
	red := srv.AddRun("acme", "shop", ghtest.WorkflowRun{
		Name: "CI", HeadBranch: "main", HeadSHA: sample.Head, Conclusion: "failure", CreatedAt: t0,
		Jobs: []*ghtest.Job{{Name: "vet", Conclusion: "success"}, {Name: "test", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{
			{Name: "coverage", Zip: ghtest.Zip(map[string][]byte{"cover.out": []byte("mode: set\n")})},
			{Name: "test-results", Zip: ghtest.Zip(map[string][]byte{"go-test.json": plant(t, sample.Report)})},
		},
	})

	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.WebhookSecret, cfg.HTTP.ReadToken = secret, testReadToken
	cfg.GitHub.APIURL = srv.APIURL()
	cfg.GitHub.AppID = app.ID
	cfg.GitHub.PrivateKeyFile = app.KeyFile
	cfg.GitHub.ResyncInterval = 0
	cfg.Triage.Reruns = 2
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	bot := httptest.NewServer(sys.Handler(cfg))
	defer bot.Close()
	pipe, err := NewPipelineWith(cfg, sys.Store, sys.Forges, log)
	if err != nil {
		t.Fatal(err)
	}
	work, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() {
		if err := sys.RunTriage(work, cfg, nil); err != nil {
			t.Errorf("triage loop: %v", err)
		}
		done <- struct{}{}
	}()
	go func() {
		if err := sys.RunWorker(work, cfg, pipe); err != nil {
			t.Errorf("worker: %v", err)
		}
		done <- struct{}{}
	}()
	defer func() { stop(); <-done; <-done }()

	// 1. A signed workflow_run webhook arrives (GitHub's published example
	// carrying the test GitHub's run), twice with the same delivery id.
	hook := bot.URL + "/api/v1/github/webhook"
	runJSON, err := srv.RunJSON("acme", "shop", red.ID)
	if err != nil {
		t.Fatal(err)
	}
	payload := ghtest.WebhookExample(t, "workflow_run", "completed")
	payload["workflow_run"], payload["repository"] = runJSON, srv.RepoJSON("acme", "shop")
	const delivery = "7d4d6f30-a9b1-11ee-8c90-0242ac120002"
	settled := sys.Expect(delivery)
	for i, want := range []string{"accepted", "duplicate"} {
		code, body := ghtest.Deliver(t, hook, secret, "workflow_run", delivery, payload)
		if code != http.StatusAccepted || !strings.Contains(string(body), `"result":"`+want+`"`) {
			t.Fatalf("delivery %d: %d %s, want 202 %s", i+1, code, body, want)
		}
	}
	// A forged one changes nothing.
	code, _ := ghtest.Deliver(t, hook, "not the secret", "workflow_run", "forged-1", payload)
	if code != http.StatusUnauthorized {
		t.Fatalf("forged delivery: %d, want 401", code)
	}

	// 2–4. The run's artifact is read, triage and the worker run on a
	// clone from the git server, a branch is pushed and one pull request
	// opened.
	tasks, err := settled.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].Status != task.StatusPublished {
		for _, tk := range tasks {
			t.Logf("task %s: %s: %s", tk.ID, tk.Status, tk.Reason)
		}
		t.Fatalf("want one published task, got %d", len(tasks))
	}
	tk := tasks[0]
	if tk.Repo != srv.HTMLURL("acme", "shop") || tk.Commit != sample.Head || tk.Bisection.Blame != sample.Commits[3] {
		t.Errorf("task: repo %s commit %s blame %s", tk.Repo, tk.Commit, tk.Bisection.Blame)
	}
	if n := len(srv.CallsTo("POST", "/repos/{owner}/{repo}/pulls")); n != 1 {
		t.Errorf("%d pull requests created, want exactly 1", n)
	}
	srv.Lock()
	repo, _ := srv.Repo("acme", "shop")
	pulls := append([]*ghtest.Pull(nil), repo.Pulls...)
	srv.Unlock()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests on the test GitHub", len(pulls))
	}
	pr := pulls[0]
	if want := fmt.Sprintf("%s/pull/%d", srv.HTMLURL("acme", "shop"), pr.Number); tk.PullRequest != want {
		t.Errorf("task's pull request %q, want %q", tk.PullRequest, want)
	}
	if out, err := srv.Git("acme", "shop", "show", pr.Head+":pricing/pricing.go"); err != nil || !strings.Contains(out, "qty >= t.MinQty") {
		t.Errorf("the pushed branch %s does not hold the fix: %v", pr.Head, err)
	}
	if !strings.Contains(strings.ToLower(pr.Body), "trajectory") {
		t.Errorf("the pull request does not carry the trajectory:\n%s", pr.Body)
	}
	refs, err := srv.Git("acme", "shop", "for-each-ref", "--format=%(refname)", "refs/heads/")
	if err != nil {
		t.Fatal(err)
	}
	var trajectory string
	for _, ref := range strings.Fields(refs) {
		if out, err := srv.Git("acme", "shop", "show", ref+":trajectory.jsonl"); err == nil {
			trajectory = out
		}
	}
	if trajectory == "" {
		t.Errorf("no trajectory.jsonl on any branch of acme/shop (%s)", refs)
	}
	if !strings.Contains(trajectory, "get_task_details") && !strings.Contains(trajectory, "run_tests") {
		t.Errorf("the trajectory holds no agent step:\n%.400s", trajectory)
	}
	for what, text := range map[string]string{"pull request body": pr.Body, "pull request title": pr.Title, "trajectory": trajectory} {
		if strings.Contains(text, plantedToken) {
			t.Errorf("the token planted in the test output appears in the %s", what)
		}
	}

	// 5. The pull request is merged: a signed pull_request closed webhook.
	closed := ghtest.WebhookExample(t, "pull_request", "closed")
	p := closed["pull_request"].(map[string]any)
	p["number"], p["html_url"], p["merged"], p["state"] = pr.Number, tk.PullRequest, true, "closed"
	p["merged_at"], p["closed_at"], p["commits"] = time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339), 1
	p["head"].(map[string]any)["ref"] = pr.Head
	closed["number"], closed["repository"] = pr.Number, srv.RepoJSON("acme", "shop")
	const merged = "9a1b2c3d-a9b1-11ee-8c90-0242ac120002"
	mergeSettled := sys.Expect(merged)
	if code, body := ghtest.Deliver(t, hook, secret, "pull_request", merged, closed); code != http.StatusAccepted {
		t.Fatalf("merge delivery: %d %s", code, body)
	}
	if _, err := mergeSettled.Wait(ctx); err != nil {
		t.Fatal(err)
	}

	// 6. The land rate is 100% in the JSON API, /metrics and the dashboard.
	var stats server.Stats
	if err := json.Unmarshal([]byte(get(t, bot.URL+"/api/v1/stats")), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Land == nil || stats.Land.Overall.Published != 1 || stats.Land.Overall.Landed != 1 || stats.Land.Overall.LandRate == nil || *stats.Land.Overall.LandRate != 1 ||
		len(stats.Land.Repos) != 1 || stats.Land.Repos[0].Repo != "acme/shop" || stats.Land.Repos[0].LandRate == nil || *stats.Land.Repos[0].LandRate != 1 {
		t.Errorf("stats: %+v", stats.Land)
	}
	metrics := get(t, bot.URL+"/metrics")
	for _, want := range []string{"redfix_land_rate_overall_ratio 1", `redfix_land_rate_ratio{repository="acme/shop"} 1`, `redfix_fixes_landed_total{repository="acme/shop"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	page := get(t, bot.URL+"/")
	if !strings.Contains(page, "100.0% of the decided pull requests landed (1 of 1") || !strings.Contains(page, `id="land-rate">100.0%`) {
		t.Errorf("the dashboard does not show the land rate")
	}
	// The history: the run's report, its repair, the pull request with its
	// state on GitHub, the landing, all under the repository's owner/name.
	if len(stats.PullRequests) != 1 || stats.PullRequests[0].State != "landed" || stats.PullRequests[0].Repo != "acme/shop" ||
		stats.PullRequests[0].Link == "" || !strings.Contains(page, `<a href="`+stats.PullRequests[0].Link+`">`) {
		t.Errorf("recent pull requests: %+v", stats.PullRequests)
	}
	if stats.Window == nil || stats.Window.ReportsAccepted != 1 || stats.Window.Queued != 1 || stats.TimeToPR == nil || stats.TimeToPR.Samples != 1 {
		t.Errorf("30-day window: %+v; time to pull request %+v", stats.Window, stats.TimeToPR)
	}
	if len(stats.Repos) != 1 || stats.Repos[0].Repo != "acme/shop" || stats.Repos[0].Last30.Published != 1 || stats.Repos[0].Last30.Landed != 1 {
		t.Errorf("history by repository: %+v", stats.Repos)
	}
}
