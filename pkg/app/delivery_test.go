package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge/gitremote"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/task"
)

// TestIntakeRefusesRepositoriesWithNoDelivery: the bot decides at intake
// how each repository's fix will be delivered. With a git remote
// configured, a report of a repository under its prefix is accepted; the
// README's example repository, on no forge and under no prefix, is
// refused with a 4xx that says why, never triaged and repaired for
// nothing.
func TestIntakeRefusesRepositoriesWithNoDelivery(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.AllowRepos = []string{"https://git.example/**", "git://git.internal/**"}
	cfg.GitRemotes = []config.GitRemote{{Prefix: "git://git.internal/team/"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sys, err := Start(ctx, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if _, ok := sys.Forges.Named(gitremote.Name); !ok {
		t.Fatalf("forges %v: the configured git remote is not registered", sys.Forges.Drivers())
	}
	bot := httptest.NewServer(sys.Handler(cfg))
	defer bot.Close()
	post := func(repo string) (int, string) {
		t.Helper()
		u := bot.URL + "/api/v1/reports?" + url.Values{"repo": {repo}, "commit": {"0123456789abcdef0123456789abcdef01234567"}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(goodGoReport))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&answer)
		return resp.StatusCode, answer.Error
	}
	if code, msg := post("https://git.example/team/app.git"); code != http.StatusUnprocessableEntity || !strings.Contains(msg, "no configured forge serves https://git.example/team/app") {
		t.Errorf("the README's repository: %d %q, want 422 saying no forge serves it", code, msg)
	}
	if code, msg := post("git://git.internal/team/app.git"); code != http.StatusAccepted {
		t.Errorf("a repository of the git remote: %d %q, want it accepted", code, msg)
	}
}

// goodGoReport is a go test -json report with one failing test.
var goodGoReport = []byte(`{"Action":"run","Package":"example.com/m/a","Test":"TestX"}
{"Action":"fail","Package":"example.com/m/a","Test":"TestX","Elapsed":0}
{"Action":"fail","Package":"example.com/m/a","Elapsed":0}
`)

// TestRepairOnAPlainGitRemote: a report of a repository that git daemon
// serves, its prefix configured as a git remote, posted to the API, is
// triaged, repaired by a worker and delivered as the branch redfix/… pushed
// to the daemon; the task's API shows the fix's description, since the
// remote has no page for it.
func TestRepairOnAPlainGitRemote(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sample := shopSample(t, ctx)
	base := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--bare", sample.Dir, filepath.Join(base, "shop.git")).CombinedOutput(); err != nil {
		t.Fatalf("bare clone: %v\n%s", err, out)
	}
	d := testsvc.StartPushableGitDaemon(t, base)
	repoURL := d.URL("shop.git")

	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.ReadToken = testReadToken
	cfg.HTTP.AllowRepos = []string{repoURL}
	cfg.Triage.Reruns = 2
	cfg.GitRemotes = []config.GitRemote{{Prefix: strings.TrimSuffix(repoURL, "shop.git")}}
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

	const delivery = "plain-remote-ci-1"
	settled := sys.Expect(delivery)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, bot.URL+"/api/v1/reports?"+url.Values{"repo": {repoURL}, "commit": {sample.Head}, "good": {sample.Good}, "branch": {"main"}}.Encode(), bytes.NewReader(sample.Report))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Redfix-Delivery", delivery)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST the report: %d", resp.StatusCode)
	}
	tasks, err := settled.Wait(ctx)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("triage: %v tasks, %v", tasks, err)
	}
	var tk task.Task
	testsvc.Poll(t, 4*time.Minute, "the task is published", func() bool {
		got, err := sys.Store.GetTask(ctx, tasks[0].ID)
		tk = got
		return err == nil && (got.Status == task.StatusPublished || got.Status == task.StatusFailed || got.Status == task.StatusNoPatch)
	})
	branch := publish.Branch(tk)
	if tk.Status != task.StatusPublished || tk.PullRequest != tk.Repo+"#"+branch {
		t.Fatalf("task %s (%s), pull request %q; want published as %s", tk.Status, tk.Reason, tk.PullRequest, branch)
	}
	show := exec.Command("git", "--git-dir", filepath.Join(base, "shop.git"), "show", "refs/heads/"+branch+":pricing/pricing.go")
	if out, err := show.Output(); err != nil || !strings.Contains(string(out), "qty >= t.MinQty") {
		t.Errorf("the pushed branch %s does not hold the fix: %v", branch, err)
	}
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, bot.URL+"/api/v1/tasks/"+tk.ID, nil)
	get.Header.Set("Authorization", "Bearer "+testReadToken)
	resp, err = http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var shown task.Task
	if err := json.NewDecoder(resp.Body).Decode(&shown); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(shown.Description, "# fix: ") || !strings.Contains(shown.Description, publish.Marker(tk.Fingerprint)) {
		t.Errorf("the task API's description:\n%s", shown.Description)
	}
}
