package worker_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitremote"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/worker"
	"github.com/redfix/redfix/pkg/workspace"
)

// bareGit runs git on a bare repository of the test's remote.
func bareGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestRepairDeliversToAPlainGitRemote: a repository on a plain git remote
// (git http-backend asking a password, configured as a git remote with
// its credentials) is checked out, repaired and its fix pushed to the
// group's branch redfix/… there, with the fix's description kept in the
// outcome (the task shows it); the group delivered a second time (the
// ledger forgot it) is a second commit on the same branch. Before the
// plain remote was a forge driver, the publish failed here.
func TestRepairDeliversToAPlainGitRemote(t *testing.T) {
	t.Parallel()
	s := sample(t)
	base := t.TempDir()
	bare := filepath.Join(base, "team", "shop")
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "clone", "-q", "--bare", s.Dir, bare).CombinedOutput(); err != nil {
		t.Fatalf("bare clone: %v\n%s", err, out)
	}
	srv := testsvc.StartGitHTTP(t, base, "redfix-bot", "remote-token-0123456789")
	remotes, err := gitremote.New(gitremote.Remote{Prefix: srv.URL("team") + "/", Username: "redfix-bot", Password: "remote-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	forges := forge.New(remotes)
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	mirrors := &workspace.Mirrors{Dir: t.TempDir(), Auth: forges.GitEnv}
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	r.pipeline.Checkouts = mirrors
	r.pipeline.Publisher = publish.ByRepo{Forge: publish.NewForge(forges, mirrors, nil, log), Local: publish.NewLocal(t.TempDir(), log)}

	tk := demoTask(s, "fp-remote-fix")
	tk.Repo = srv.URL("team/shop")
	out, err := repair(t, r.pipeline, tk)
	if err != nil {
		t.Fatalf("Repair: %v", err)
	}
	branch := publish.Branch(tk)
	if out.Status != task.StatusPublished || out.PullRequest != tk.Repo+"#"+branch {
		t.Fatalf("outcome %s %q (%s), want published as the branch %s of %s", out.Status, out.PullRequest, out.Reason, branch, tk.Repo)
	}
	if !strings.Contains(out.Description, publish.Marker(tk.Fingerprint)) || !strings.Contains(out.Description, "TestVolumeDiscount") {
		t.Errorf("the outcome's description is not the pull request's:\n%s", out.Description)
	}
	tip1 := bareGit(t, bare, "rev-parse", "refs/heads/"+branch)
	if got := bareGit(t, bare, "show", tip1+":pricing/pricing.go"); !strings.Contains(got, "qty >= t.MinQty") {
		t.Fatalf("the pushed branch does not hold the fix")
	}

	// The group again: the ledger forgot it, a new task repairs it anew.
	ctx := context.Background()
	if ok, err := r.store.ForgetPublished(ctx, tk.Fingerprint, out.PullRequest); err != nil || !ok {
		t.Fatalf("forget the publication: %v, %v", ok, err)
	}
	again := tk
	again.ID = "task-fp-remote-fix-again"
	r.pipeline.NewAgent = func() worker.Agent {
		return scriptedAgent{edits: []edit{fixDiscount, {"pricing/pricing.go", "// Tier gives PercentOff", "// Tier gives its PercentOff"}}, testsPassed: true}
	}
	out2, err := repair(t, r.pipeline, again)
	if err != nil {
		t.Fatalf("second Repair: %v", err)
	}
	if out2.Status != task.StatusPublished || out2.PullRequest != out.PullRequest {
		t.Fatalf("second outcome %s %q (%s), want published on %s", out2.Status, out2.PullRequest, out2.Reason, out.PullRequest)
	}
	tip2 := bareGit(t, bare, "rev-parse", "refs/heads/"+branch)
	if parent := bareGit(t, bare, "rev-parse", tip2+"^"); tip2 == tip1 || parent != tip1 {
		t.Errorf("the second delivery is %s with parent %s, want a second commit on %s", tip2, parent, tip1)
	}
	if heads := bareGit(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/redfix/"); heads != "refs/heads/"+branch {
		t.Errorf("redfix's branches: %q, want the group's alone", heads)
	}
}

// TestRepairForARepositoryNoForgeServesIsPermanent: a fix for a remote
// repository that no configured forge serves cannot be delivered however
// often it is tried: the task fails at once (a permanent error), instead
// of the whole repair running again on each of nats.max_deliver tries.
func TestRepairForARepositoryNoForgeServesIsPermanent(t *testing.T) {
	t.Parallel()
	s := sample(t)
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	r := newRig(t, scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true})
	r.pipeline.Publisher = remotePublisher{publish.ByRepo{Forge: publish.NewForge(forge.New(), &workspace.Mirrors{Dir: t.TempDir()}, nil, log), Local: publish.NewLocal(t.TempDir(), log)}}
	_, err := repair(t, r.pipeline, demoTask(s, "fp-not-served"))
	if !errors.Is(err, worker.ErrPermanent) || !errors.Is(err, forge.ErrNotServed) {
		t.Fatalf("Repair = %v, want a permanent error saying no forge serves the repository", err)
	}
}
