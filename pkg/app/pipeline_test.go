package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/workspace"
)

func TestPipelinePublishesOnGitHubWhenConfigured(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	pipe, err := NewPipeline(cfg, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := unwrapRedacting(t, pipe.Publisher).(*publish.Local); !ok {
		t.Errorf("with no GitHub configured the publisher is %T, want the local one", pipe.Publisher)
	}
	m, ok := pipe.Checkouts.(*workspace.Mirrors)
	if !ok || m.Dir != filepath.Join(cfg.DataDir, "mirrors") || m.Auth != nil {
		t.Errorf("checkouts %T %+v", pipe.Checkouts, m)
	}

	cfg.GitHub.Token = "ghp_configured"
	if cfg.PublishMode() != "github" {
		t.Fatalf("mode %q", cfg.PublishMode())
	}
	pipe, err = NewPipeline(cfg, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	b, ok := unwrapRedacting(t, pipe.Publisher).(publish.ByRepo)
	if !ok || b.Forge == nil || b.Local == nil {
		t.Fatalf("with GitHub configured the publisher is %T", pipe.Publisher)
	}
	if m := pipe.Checkouts.(*workspace.Mirrors); m.Auth == nil {
		t.Error("mirrors get no credentials with GitHub configured")
	}
}

// The worker's pipeline on a repository of a (test) GitHub: the checkout
// comes from a mirror cloned with the token, the agent repairs, and the
// fix is a pull request there.
func TestWorkerPipelinePublishesOnGitHub(t *testing.T) {
	clearEnv(t)
	ctx := context.Background()
	s, err := demo.Build(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	head, err := gitrepo.Repo{Dir: s.Dir}.Resolve(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	v, err := triage.ReproduceAt(ctx, lang.New(golang.Driver{}), s.Dir, head, []string{"TestVolumeDiscount/at_threshold"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var failures []task.Failure
	for _, e := range v.Evidence {
		if e.Failure != nil {
			failures = append(failures, *e.Failure)
		}
	}
	if len(failures) == 0 {
		t.Fatal("the sample's test passes")
	}

	srv := ghtest.New(t)
	srv.CreateRepo("shop", "sample", s.Dir)
	const token = "ghp_workerpipelinetoken000000000000000"
	srv.AddToken(token, "redfix-bot")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.GitHub.APIURL, cfg.GitHub.Token = srv.APIURL(), token
	forges, err := newForges(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := NewPipelineWith(cfg, nil, forges, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	repo := srv.CloneURL("shop", "sample")
	tk := task.Task{
		ID: "gh-1", Repo: repo, Commit: head, Branch: "main", Failures: failures,
		Fingerprint: triage.Fingerprint(repo, failures[0]), Flakiness: v.Flakiness,
		Bisection: task.Bisection{Blame: s.Commits[3], Bad: head},
	}
	out, err := pipe.Repair(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != task.StatusPublished {
		t.Fatalf("status %s: %s", out.Status, out.Reason)
	}
	srv.Lock()
	r, _ := srv.Repo("shop", "sample")
	pulls := append([]*ghtest.Pull(nil), r.Pulls...)
	srv.Unlock()
	if len(pulls) != 1 || !strings.HasSuffix(out.PullRequest, fmt.Sprintf("/pull/%d", pulls[0].Number)) || !pulls[0].Draft {
		t.Fatalf("pull requests %+v, reported %q", pulls, out.PullRequest)
	}
	diff, err := srv.Git("shop", "sample", "diff", head, pulls[0].Head)
	if err != nil || !strings.Contains(diff, "qty >= t.MinQty") {
		t.Fatalf("the pushed fix: %v\n%s", err, diff)
	}
	if st := pipe.Checkouts.(*workspace.Mirrors).Stats(); st.Clones != 1 {
		t.Errorf("mirror stats %+v, want one clone", st)
	}
}

// unwrapRedacting is the publisher inside the redaction every pull request
// goes through.
func unwrapRedacting(t *testing.T, p any) any {
	t.Helper()
	r, ok := p.(publish.Redacting)
	if !ok {
		t.Fatalf("the publisher %T does not redact", p)
	}
	return r.Publisher
}
