package app

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/fakeforge"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// registerForge adds d to the wiring's forge drivers for the test, as a
// driver's registration line does.
func registerForge(t *testing.T, d forge.Driver) {
	t.Helper()
	before := forgeDrivers
	t.Cleanup(func() { forgeDrivers = before })
	forgeDrivers = append(slices.Clip(forgeDrivers), func(config.Config, *zap.Logger) (forge.Driver, error) { return d, nil })
}

// TestRepairOnAForgeThatIsNotGitHub: a forge that exists only in the tests,
// registered with one line, takes a repair end to end: a report of a
// repository in nested groups posted to the API, triaged from a mirror
// cloned with the forge's credentials (the human-fix rule asked of that
// forge), repaired by a worker and published there as a change request,
// whose fix is kept under the repository's full path. Nothing of it
// reaches GitHub, which is not configured.
func TestRepairOnAForgeThatIsNotGitHub(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sample := shopSample(t, ctx)
	repos := t.TempDir()
	fake := fakeforge.New(repos)
	const path = "acme/platform/shop"
	repoURL, err := fake.CreateRepo(path, sample.Dir)
	if err != nil {
		t.Fatal(err)
	}
	registerForge(t, fake)

	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.ReadToken = testReadToken
	cfg.HTTP.AllowRepos = []string{"https://" + fakeforge.Host + "/acme/**"}
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
	if sys.GitHub != nil || len(sys.Forges.Drivers()) != 1 {
		t.Fatalf("forges %v, GitHub %v: want the fake forge alone", sys.Forges.Drivers(), sys.GitHub)
	}
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

	const delivery = "fake-forge-ci-1"
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
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want 1", len(tasks))
	}
	checkOnTheFakeForge(t, ctx, sys, fake, repos, path, tasks[0])
}

// checkOnTheFakeForge: tk was published as change request 1 of path on
// the fake forge, holding the fix, labelled, its fix kept under the full
// path, and triage's human-fix rule was asked of that forge.
func checkOnTheFakeForge(t *testing.T, ctx context.Context, sys *System, fake *fakeforge.Forge, repos, path string, tk task.Task) {
	t.Helper()
	id := forge.RepoID{Host: fakeforge.Host, Path: path}
	if want := fakeforge.URL(path) + "/-/change/1"; tk.Status != task.StatusPublished || tk.PullRequest != want {
		t.Fatalf("task %s: %s (%s), pull request %q; want published as %s", tk.ID, tk.Status, tk.Reason, tk.PullRequest, want)
	}
	cr, err := fake.ChangeRequest(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if cr.State != forge.StateOpen || !strings.HasPrefix(cr.Head, forge.BranchPrefix) || cr.Base != "main" || !strings.Contains(strings.ToLower(cr.Body), "trajectory") {
		t.Errorf("change request %+v", cr)
	}
	show := exec.Command("git", "--git-dir", filepath.Join(repos, filepath.FromSlash(path)), "show", cr.HeadSHA+":pricing/pricing.go")
	if out, err := show.Output(); err != nil || !strings.Contains(string(out), "qty >= t.MinQty") {
		t.Errorf("the pushed branch %s does not hold the fix: %v", cr.Head, err)
	}
	if labels, _, err := fake.Labels(id, 1); err != nil || !slices.Contains(labels, "redfix") {
		t.Errorf("labels %v, %v", labels, err)
	}
	if f, err := sys.Store.GetFix(ctx, path, 1); err != nil || f.TaskID != tk.ID || f.State != task.FixOpen {
		t.Errorf("the fix under %s: %+v, %v", path, f, err)
	}
	var rule *task.RuleCheck
	for i := range tk.Rules {
		if tk.Rules[i].Rule == triage.RuleHumanFix {
			rule = &tk.Rules[i]
		}
	}
	if rule == nil || rule.Verdict != task.RulePass {
		t.Errorf("the human-fix rule %+v: want it asked of the fake forge, and passed", rule)
	}
}
