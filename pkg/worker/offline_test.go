package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/offline"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/worker"
)

// The offline policy's regression check, through the worker's whole path:
// each archive of testdata/offline is a tiny module whose commit 1 brings a
// single-point bug (a comparison, a boolean operator, an arithmetic sign, a
// slice bound, a constant) inside a larger change (other functions added,
// constants changed elsewhere), and a failure that names the function. The
// offline policy repairs it, the real gates check the patch and the local
// publisher opens the pull request. In the last archive the only change
// that passes is the exact inverse of a one-line culprit: a revert, which
// ends without a fix pull request, and says so.

// offlineCase is one archive: the failing test, what must come of it
// ("fix" or "revert") and, for a fix, a line the patch must add.
type offlineCase struct {
	name, failing, want, fixed string
	commits                    [][]txtar.File
}

func loadOfflineCases(t *testing.T) []offlineCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "offline", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases in testdata/offline: %v", err)
	}
	sort.Strings(paths)
	var out []offlineCase
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := offlineCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), commits: [][]txtar.File{nil, nil}}
		for _, l := range strings.Split(string(ar.Comment), "\n") {
			switch k, v, _ := strings.Cut(l, ": "); k {
			case "failing":
				c.failing = v
			case "want":
				c.want = v
			case "fixed":
				c.fixed = v
			}
		}
		for _, f := range ar.Files {
			n, path, _ := strings.Cut(f.Name, "/")
			k := map[string]int{"0": 0, "1": 1}[n]
			c.commits[k] = append(c.commits[k], txtar.File{Name: path, Data: f.Data})
		}
		if c.failing == "" || (c.want != "fix" && c.want != "revert") || c.want == "fix" && c.fixed == "" {
			t.Fatalf("%s: want failing, want (fix or revert) and, for a fix, fixed", p)
		}
		out = append(out, c)
	}
	return out
}

// offlineTask makes the case's repository (a good commit, then the blame)
// and the task triage would hand over.
func offlineTask(t *testing.T, ctx context.Context, c offlineCase) task.Task {
	t.Helper()
	dir := filepath.Join(t.TempDir(), c.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	subjects := []string{"Add the " + c.name + " package", "Extend the " + c.name + " package"}
	var shas []string
	for i, files := range c.commits {
		for _, f := range files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := repo.CommitAll(ctx, subjects[i])
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
	}
	out, err := golang.Runner{Timeout: 2 * time.Minute}.Run(ctx, dir, []string{c.failing}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) == 0 {
		t.Fatalf("%s does not fail at the blame commit: %s", c.failing, out.Summary())
	}
	return task.Task{
		ID: "task-" + c.name, Fingerprint: "fp-" + c.name, Repo: dir, Commit: shas[1], Branch: "main",
		Failures:  out.Failed,
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Good: shas[0], Bad: shas[1], Blame: shas[1], Subject: subjects[1], Steps: 1},
		Status:    task.StatusQueued,
	}
}

func TestOfflineRepairsSinglePointBugsInLargerCommits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go test in real repositories")
	}
	for _, c := range loadOfflineCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			tk := offlineTask(t, ctx, c)
			log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
			runner := golang.Runner{Timeout: 2 * time.Minute}
			drv := golang.Driver{Tests: runner}
			prDir := t.TempDir()
			p := &worker.Pipeline{
				NewAgent: func() worker.Agent {
					return harness.New(harness.Config{MaxSteps: 40}, offline.New(log, []lang.Driver{drv}), drv, nil, log)
				},
				Languages: lang.New(drv),
				Policy:    "offline",
				Gates:     validators.New(validators.Config{}, log),
				Judge:     judge.NotRun{},
				Publisher: publish.NewLocal(prDir, log),
				WorkDir:   t.TempDir(),
				Log:       log,
			}
			out, err := p.Repair(ctx, tk)
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			t.Logf("status %s: %s\nsummary: %s\npatch:\n%s", out.Status, out.Reason, out.Agent.Summary, out.Agent.Patch)
			switch c.want {
			case "fix":
				if out.Status != task.StatusPublished || out.PullRequest == "" {
					t.Fatalf("status %s (%s), want a published fix; gates %+v", out.Status, out.Reason, out.Gates)
				}
				if !strings.Contains(out.Agent.Patch, "+\t") || !strings.Contains(out.Agent.Patch, c.fixed) {
					t.Errorf("the patch does not add %q:\n%s", c.fixed, out.Agent.Patch)
				}
			case "revert":
				if out.Status == task.StatusPublished || out.PullRequest != "" {
					t.Fatalf("a revert was published as a fix: %s %s", out.Status, out.PullRequest)
				}
				if strings.TrimSpace(out.Agent.Patch) != "" {
					t.Errorf("the agent left a patch:\n%s", out.Agent.Patch)
				}
				if !strings.Contains(out.Reason, "only a revert passes") {
					t.Errorf("the outcome does not say only a revert passes: %q", out.Reason)
				}
			}
			if entries, _ := os.ReadDir(prDir); c.want == "revert" && len(entries) != 0 {
				t.Errorf("the publisher wrote %d entries for a revert", len(entries))
			}
		})
	}
}
