package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
)

// goShopWithFile is the Go sample with one more commit on top that adds
// .redfix.yaml holding file: the head CI reports red on (the breaking
// commit is still below it).
func goShopWithFile(t *testing.T, ctx context.Context, file string) redRun {
	t.Helper()
	sample := shopSample(t, ctx)
	if err := os.WriteFile(filepath.Join(sample.Dir, repoconfig.FileName), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	head, err := gitrepo.Repo{Dir: sample.Dir}.CommitAll(ctx, "add .redfix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := shopRun(sample)
	r.Head = head
	return r
}

// TestRedfixYAMLDeniedPathRejectsTheRepair: the repository's .redfix.yaml
// denies the directory the repair must change; the paths gate rejects the
// patch naming the path and the rule, the task says so, and no pull
// request is opened.
func TestRedfixYAMLDeniedPathRejectsTheRepair(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r := goShopWithFile(t, ctx, "version: 1\npaths:\n  deny: [\"pricing/**\"]\n")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Harness.FeedbackRounds = 0
	svc := startGitHubService(t, ctx, cfg, r)

	tasks := svc.deliverRed(t, ctx, "c0f1e2d3-aa01-11ee-8c90-0242ac120002")
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want 1", len(tasks))
	}
	tk := tasks[0]
	if tk.Status != task.StatusNoPatch {
		t.Errorf("task %s: %s; want no_patch", tk.Status, tk.Reason)
	}
	// The agent's edit of the file is refused with the rule (or, had it
	// got a patch past that, the paths gate would have rejected it with
	// the same words): the task holds the reason either way.
	said := tk.Reason
	for _, rd := range tk.Rounds {
		said += "\n" + rd.Reason + "\n" + rd.Trajectory
		for _, g := range rd.Gates {
			if g.Name == "paths" && g.Verdict != task.GateFail {
				t.Errorf("the paths gate passed a patch: %+v", g)
			}
			said += "\n" + g.Detail
		}
	}
	for _, want := range []string{"pricing/pricing.go", "refused by .redfix.yaml paths.deny"} {
		if !strings.Contains(said, want) {
			t.Errorf("the task does not say %q; it says:\n%s", want, said)
		}
	}
	if n := len(svc.pulls()); n != 0 {
		t.Errorf("%d pull requests opened, want none", n)
	}
	if runs := svc.checkRuns(repoconfig.CheckName); len(runs) != 0 {
		t.Errorf("check runs %+v on a valid file; want none", runs)
	}
}

// TestRedfixYAMLInvalidIsReportedAndCentralApplies: an invalid
// .redfix.yaml (an unknown key, which would deny the fix's directory were
// it read leniently) becomes a check run on the commit saying what is
// wrong, and the repair goes on under the central configuration to its
// pull request.
func TestRedfixYAMLInvalidIsReportedAndCentralApplies(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r := goShopWithFile(t, ctx, "version: 1\npaths:\n  deny: [\"pricing/**\"]\nreviewer: [alice]\n")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Harness.FeedbackRounds = 0
	svc := startGitHubService(t, ctx, cfg, r)

	tasks := svc.deliverRed(t, ctx, "c0f1e2d4-aa01-11ee-8c90-0242ac120002")
	if len(tasks) != 1 || tasks[0].Status != task.StatusPublished {
		for _, tk := range tasks {
			t.Logf("task %s: %s: %s", tk.ID, tk.Status, tk.Reason)
		}
		t.Fatalf("want one published task, got %d", len(tasks))
	}
	if n := len(svc.pulls()); n != 1 {
		t.Errorf("%d pull requests, want 1 under the central configuration", n)
	}
	runs := svc.checkRuns(repoconfig.CheckName)
	if len(runs) != 1 {
		t.Fatalf("check runs %+v; want one on the commit", runs)
	}
	c := runs[0]
	if c.Name != "redfix / .redfix.yaml" || c.HeadSHA != r.Head || c.Status != "completed" || c.Conclusion != "action_required" || c.Creator.Kind != "installation" {
		t.Errorf("check run %+v", c)
	}
	for _, want := range []string{`line 4: unknown key "reviewer"`, "central configuration"} {
		if !strings.Contains(c.Summary+c.Title, want) {
			t.Errorf("the check run says %q / %q; want %q in it", c.Title, c.Summary, want)
		}
	}
}
