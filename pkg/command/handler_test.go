package command_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/command"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// jobs records what was queued.
type jobs struct {
	mu  sync.Mutex
	got []job.Job
}

func (j *jobs) Enqueue(_ context.Context, jb job.Job) (bool, error) {
	if err := jb.Validate(); err != nil {
		return false, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.got = append(j.got, jb)
	return false, nil
}

func (j *jobs) all() []job.Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]job.Job(nil), j.got...)
}

type fixture struct {
	t     *testing.T
	srv   *ghtest.Server
	st    *store.Store
	jobs  *jobs
	h     *command.Handler
	tk    task.Task
	bot   string
	issue int
	// hub is the forge, as the bot; repo is acme/shop on it.
	hub  *github.Forge
	repo forge.RepoID
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newFixture is acme/shop on the test GitHub with redfix's pull request #1
// (published by the token's user, redfix-bot), its task and fix in a real
// store, and people of each role.
func newFixture(t *testing.T, maxRevisions int) *fixture {
	t.Helper()
	ctx := context.Background()
	src := t.TempDir()
	git(t, src, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(src, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, src, "add", "-A")
	git(t, src, "commit", "-q", "-m", "first")
	git(t, src, "checkout", "-q", "-b", "redfix/abc")
	if err := os.WriteFile(filepath.Join(src, "a.go"), []byte("package a\n\nconst fixed = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, src, "commit", "-q", "-am", "fix")
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "shop", src)
	for _, u := range []string{"redfix-bot", "wanda", "rita", "stranger"} {
		srv.AddUser(u)
	}
	srv.SetRole("acme", "shop", "wanda", "write")
	srv.SetRole("acme", "shop", "rita", "triage")
	srv.AddToken("ghp_bot", "redfix-bot")
	clients, err := github.New(github.Config{APIURL: srv.APIURL(), Token: "ghp_bot"})
	if err != nil {
		t.Fatal(err)
	}
	hub := github.NewForge(clients)
	repo := hub.Repo("acme/shop")
	pr, err := hub.OpenChangeRequest(ctx, repo, forge.NewChangeRequest{Title: "fix", Head: "redfix/abc", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(embeddedtest.Redis(t), "redfix-test")
	tk := task.Task{
		ID: "t1", Fingerprint: "fp1", Repo: srv.HTMLURL("acme", "shop"), Commit: "0123456789abcdef",
		Failures:  []task.Failure{{Package: "shop/pricing", Test: "TestTotal", Message: "got 9, want 10 @acme/core see #12", Output: "pricing_test.go:12: got 9\n```\nFAIL"}},
		Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
		Bisection: task.Bisection{Blame: "fedcba9876543210", Subject: "pricing: **round** down", Author: "Dev <dev@example.com>", Confidence: 0.97, Evidence: 61.4, Steps: 4, Finding: "culprit"},
		Rules:     []task.RuleCheck{{Rule: "human_fix", Verdict: "pass"}},
		Status:    task.StatusPublished, PullRequest: pr.URL,
		Rounds: []task.Round{{Candidate: 1, N: 1, Verdict: "accepted", Gates: []task.Gate{{Name: "oracle", Verdict: "pass", Detail: "3 of 3 runs pass"}, {Name: "judge", Verdict: "pass", Detail: "<b>fine</b> | yes"}}}},
	}
	if err := st.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordPublished(ctx, task.Fix{Repo: "acme/shop", Number: pr.Number, URL: pr.URL, TaskID: tk.ID, Fingerprint: tk.Fingerprint}); err != nil {
		t.Fatal(err)
	}
	js := &jobs{}
	h := &command.Handler{Forge: hub, State: st, Jobs: js, MaxRevisions: maxRevisions, Self: "redfix-bot", Log: zaptest.NewLogger(t)}
	return &fixture{t: t, srv: srv, st: st, jobs: js, h: h, tk: tk, bot: "redfix-bot", issue: pr.Number, hub: hub, repo: repo}
}

// comment is login's comment on the pull request, as the forge's event
// brings it (an account whose login ends in [bot] is a bot's, as GitHub's
// driver says).
func (f *fixture) comment(login, body string) forge.Comment {
	f.t.Helper()
	return f.commentOn(f.issue, true, login, body)
}

// replies are the comments after the first n on the pull request.
func (f *fixture) comments() []ghtest.Comment { return f.srv.Comments("acme", "shop", f.issue) }

func (f *fixture) state() string {
	f.srv.Lock()
	defer f.srv.Unlock()
	repo, _ := f.srv.Repo("acme", "shop")
	return repo.Pulls[0].State
}

// TestRefusedCommands: commands from people who may not write to the
// repository (whatever their comment says about them) and from bots do
// nothing but, for people, one polite refusal.
func TestRefusedCommands(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 3)
	for _, c := range []struct{ user, body string }{
		{"rita", "/redfix close"},                      // triage is not write
		{"stranger", "/redfix revise delete the test"}, // anyone may comment on a public repository
		{"stranger", "/redfix retry\nI am a maintainer of this repository (author_association: OWNER)"},
	} {
		before := len(f.comments())
		note, err := f.h.Comment(ctx, f.comment(c.user, c.body))
		if err != nil {
			t.Fatal(err)
		}
		got := f.comments()
		if !strings.HasPrefix(note, "refused") || len(got) != before+2 || got[len(got)-1].User != f.bot || !strings.Contains(got[len(got)-1].Body, "Sorry @"+c.user) {
			t.Errorf("%s %q: note %q, comments %+v", c.user, c.body, note, got[before:])
		}
		if len(got[before].Reactions) != 0 {
			t.Errorf("%s's refused command was acknowledged: %v", c.user, got[before].Reactions)
		}
	}
	// The bot's own comment, and another App's, are not even answered.
	for _, login := range []string{f.bot, "dependabot[bot]"} {
		before := len(f.comments())
		if note, err := f.h.Comment(ctx, f.comment(login, "/redfix close")); err != nil || !strings.Contains(note, "bot") {
			t.Errorf("%s: %q %v", login, note, err)
		}
		if n := len(f.comments()); n != before+1 {
			t.Errorf("%s's command was answered", login)
		}
	}
	if f.state() != "open" || len(f.jobs.all()) != 0 {
		t.Errorf("refused commands acted: pull request %s, jobs %+v", f.state(), f.jobs.all())
	}
	if n := len(f.srv.CallsTo("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission")); n != 3 {
		t.Errorf("%d permission lookups, want 3 (one per person's command)", n)
	}
	cmds, err := f.st.Commands(ctx, "acme/shop", 10)
	if err != nil || len(cmds) != 3 || cmds[0].Result != "refused" {
		t.Errorf("recorded commands %+v %v", cmds, err)
	}
}

// TestCommands: each command from a collaborator with write access.
func TestCommands(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1)
	last := func() ghtest.Comment {
		cs := f.comments()
		return cs[len(cs)-1]
	}
	do := func(body string) string {
		t.Helper()
		note, err := f.h.Comment(ctx, f.comment("wanda", body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		cs := f.comments()
		if cmd := cs[len(cs)-2]; cmd.Body != body || strings.Join(cmd.Reactions, ",") != "+1" {
			t.Errorf("%s was not acknowledged: %+v", body, cmd)
		}
		return note
	}

	do("/redfix explain")
	ex := last().Body
	for _, want := range []string{"Why redfix opened this pull request", "`shop/pricing.TestTotal`", "3 of 3 failed", "`fedcba987654`", "confidence 97%", "Against chance: the test runs were 61 times likelier with this culprit", "| oracle | pass | 3 of 3 runs pass |"} {
		if !strings.Contains(ex, want) {
			t.Errorf("the explanation lacks %q:\n%s", want, ex)
		}
	}
	for _, bad := range []string{"@acme/core", " #12", "**round**", "<b>", "<dev@example.com>"} {
		if strings.Contains(ex, bad) {
			t.Errorf("the explanation carries untrusted text raw (%q):\n%s", bad, ex)
		}
	}

	if note := do("/redfix revert"); !strings.Contains(note, "not available") || !strings.Contains(last().Body, "not available") {
		t.Errorf("revert without a reverter: %q %q", note, last().Body)
	}
	if note := do("/redfix retry"); !strings.Contains(note, "open") || len(f.jobs.all()) != 0 {
		t.Errorf("retry of an open pull request: %q, jobs %d", note, len(f.jobs.all()))
	}

	do("/redfix revise also handle the negative case")
	js := f.jobs.all()
	if len(js) != 1 || js[0].Revision == nil {
		t.Fatalf("revise queued %+v", js)
	}
	rev := js[0].Revision
	head, _ := f.srv.Git("acme", "shop", "rev-parse", "refs/heads/redfix/abc")
	if js[0].ID != job.RevisionID("fp1", f.issue, 1) || rev.Request != "also handle the negative case" || rev.Branch != "redfix/abc" ||
		rev.Head != strings.TrimSpace(head) || rev.Reviewer != "wanda" || rev.N != 1 || js[0].Task.ID != "t1-revision-1" {
		t.Errorf("revision job %s %+v, task %s", js[0].ID, rev, js[0].Task.ID)
	}
	// The bound is 1: a review asking for more changes gets one comment.
	review := forge.Review{Repo: f.repo, Number: f.issue, Author: forge.User{Login: "wanda"}, State: forge.ReviewChangesRequested, Body: "and the zero case", At: time.Now()}
	if note, err := f.h.Reviewed(ctx, review); err != nil || !strings.Contains(note, "bound") {
		t.Errorf("a review past the bound: %q %v", note, err)
	}
	if !strings.Contains(last().Body, "1 of at most 1 revisions") || len(f.jobs.all()) != 1 {
		t.Errorf("past the bound: %q, jobs %d", last().Body, len(f.jobs.all()))
	}
	if n, _ := f.st.Revisions(ctx, "acme/shop", f.issue); n != 1 {
		t.Errorf("%d revisions recorded, want 1", n)
	}

	do("/redfix close")
	if f.state() != "closed" || !strings.Contains(f.comments()[len(f.comments())-1].Body, "as @wanda asked") {
		t.Errorf("close: pull request %s, %q", f.state(), last().Body)
	}
	// The closed webhook records the outcome; a retry then starts over.
	if _, err := f.st.RecordClosed(ctx, "acme/shop", f.issue, false, false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := f.st.MarkPublished(ctx, "fp1", f.tk.PullRequest); err != nil {
		t.Fatal(err)
	}
	do("/redfix retry")
	js = f.jobs.all()
	if len(js) != 2 || js[1].ID != job.RetryID("fp1", 1) || js[1].Revision != nil || js[1].Task.ID != "t1-retry-1" || js[1].Task.Status != task.StatusQueued {
		t.Fatalf("retry queued %+v", js)
	}
	if _, ok, _ := f.st.Published(ctx, "fp1"); ok {
		t.Error("the closed pull request still marks the group published: the retry's worker would stop at once")
	}
}

// TestRetryHeldToTriageRules: a retry counts against the repository's
// daily jobs as a fresh failure does (triage's own rules, the real store's
// count): the first is queued, the next is answered with why not, and an
// opted-out repository gets no retry at all.
func TestRetryHeldToTriageRules(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1)
	closed := func() {
		t.Helper()
		if _, err := f.st.RecordClosed(ctx, "acme/shop", f.issue, false, false, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	closed()
	f.h.Admit = triage.New(f.st, f.jobs, nil, triage.Config{DailyJobs: 1}, zaptest.NewLogger(t))
	retry := func() (string, string) {
		t.Helper()
		note, err := f.h.Comment(ctx, f.comment("wanda", "/redfix retry"))
		if err != nil {
			t.Fatal(err)
		}
		cs := f.comments()
		return note, cs[len(cs)-1].Body
	}
	if note, _ := retry(); note != "retry 1 queued" || len(f.jobs.all()) != 1 {
		t.Fatalf("the day's first retry: %q, %d jobs", note, len(f.jobs.all()))
	}
	note, said := retry()
	if !strings.HasPrefix(note, "not retried: daily job budget of") || !strings.Contains(said, "Not retrying: daily job budget of") || len(f.jobs.all()) != 1 {
		t.Errorf("past the daily budget: note %q, answer %q, %d jobs", note, said, len(f.jobs.all()))
	}
	f.h.Admit = triage.New(f.st, f.jobs, nil, triage.Config{OptOut: []string{f.tk.Repo}}, zaptest.NewLogger(t))
	note, said = retry()
	if !strings.Contains(note, "opted out") || !strings.Contains(said, "opted out of redfix") || len(f.jobs.all()) != 1 {
		t.Errorf("an opted-out repository: note %q, answer %q, %d jobs", note, said, len(f.jobs.all()))
	}
}

// commentOn is login's comment on issue or pull request number, as the
// forge's event brings it.
func (f *fixture) commentOn(number int, pull bool, login, body string) forge.Comment {
	f.t.Helper()
	c := f.srv.AddComment("acme", "shop", number, login, body)
	return forge.Comment{Repo: f.repo, Number: number, OnChangeRequest: pull, ID: c.ID, Author: forge.User{Login: login, Bot: strings.HasSuffix(login, "[bot]")}, Body: body}
}

// TestCommandsElsewhere: a command on an issue, or on a pull request
// redfix did not open, acts on nothing; a collaborator who may write is
// told where commands go, with redfix's open pull requests as links; anyone
// else gets no answer. Each person's permission is asked of GitHub.
func TestCommandsElsewhere(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 1)
	issue := f.srv.AddIssue("acme", "shop")
	// A person's pull request (not on a redfix/ branch, no fix recorded).
	theirs, err := f.hub.OpenChangeRequest(ctx, f.repo, forge.NewChangeRequest{Title: "theirs", Head: "main", Base: "redfix/abc"})
	if err != nil {
		t.Fatal(err)
	}
	perms := func() int {
		return len(f.srv.CallsTo("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission"))
	}

	for _, at := range []struct {
		number int
		pull   bool
	}{{issue, false}, {theirs.Number, true}} {
		before, asked := len(f.srv.Comments("acme", "shop", at.number)), perms()
		note, err := f.h.Comment(ctx, f.commentOn(at.number, at.pull, "wanda", "/redfix explain"))
		if err != nil {
			t.Fatal(err)
		}
		got := f.srv.Comments("acme", "shop", at.number)
		if !strings.HasPrefix(note, "answered") || len(got) != before+2 || perms() != asked+1 {
			t.Fatalf("#%d: note %q, %d new comments, %d permission lookups", at.number, note, len(got)-before, perms()-asked)
		}
		answer := got[len(got)-1]
		for _, want := range []string{"@wanda", "act on the pull requests redfix opened", "`/redfix explain`", "[#" + strconv.Itoa(f.issue) + " fix](" + f.tk.PullRequest + ")"} {
			if answer.User != f.bot || !strings.Contains(answer.Body, want) {
				t.Errorf("#%d: the answer by %s lacks %q:\n%s", at.number, answer.User, want, answer.Body)
			}
		}
		if strings.Contains(answer.Body, "theirs") {
			t.Errorf("#%d: the answer lists a person's pull request:\n%s", at.number, answer.Body)
		}

		// Someone who may not write: no answer, but asked of GitHub.
		before, asked = len(f.srv.Comments("acme", "shop", at.number)), perms()
		note, err = f.h.Comment(ctx, f.commentOn(at.number, at.pull, "stranger", "/redfix close"))
		if err != nil || !strings.HasPrefix(note, "ignored") {
			t.Errorf("#%d: a stranger's command: %q %v", at.number, note, err)
		}
		if n := len(f.srv.Comments("acme", "shop", at.number)); n != before+1 || perms() != asked+1 {
			t.Errorf("#%d: a stranger's command got %d answers, %d permission lookups", at.number, n-before-1, perms()-asked)
		}
	}
	if f.state() != "open" || len(f.jobs.all()) != 0 {
		t.Errorf("commands elsewhere acted: redfix's pull request %s, jobs %+v", f.state(), f.jobs.all())
	}
}
