package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// ghFixture is a repository on a test GitHub with a failing test, the
// commit that broke it, and a fix as a patch.
type ghFixture struct {
	srv          *ghtest.Server
	app          *ghtest.App
	owner, name  string
	head, blame  string
	patch        string
	sleeps       *sleepLog
	trajectory   []byte
	sourceCommit string
}

type sleepLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleepLog) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func commitAs(t *testing.T, r gitrepo.Repo, name, email, msg string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := r.Git(ctx, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git(ctx, "-c", "user.name="+name, "-c", "user.email="+email, "commit", "-q", "-m", msg); err != nil {
		t.Fatal(err)
	}
	sha, err := r.Resolve(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func writeFile(t *testing.T, dir, path, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newGHFixture(t *testing.T) *ghFixture {
	t.Helper()
	ctx := context.Background()
	src, err := gitrepo.Init(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, src.Dir, "go.mod", "module example.com/calc\n\ngo 1.22\n")
	writeFile(t, src.Dir, ".github/CODEOWNERS", "# owners\n*.md @acme/docs\n/calc/ @calc-owner @acme/calc-team nobody@example.com\n")
	writeFile(t, src.Dir, "calc/calc.go", "package calc\n\n// Add returns x+y.\nfunc Add(x, y int) int {\n\treturn x + y\n}\n")
	writeFile(t, src.Dir, "calc/calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(1, 2); got != 3 {\n\t\tt.Fatalf(\"Add(1, 2) = %d, want 3\", got)\n\t}\n}\n")
	commitAs(t, src, "Ann Good", "ann@example.com", "calc: Add")
	writeFile(t, src.Dir, "calc/calc.go", "package calc\n\n// Add returns x+y.\nfunc Add(x, y int) int {\n\treturn x - y\n}\n")
	blame := commitAs(t, src, "Jane Doe", "jane@example.com", "calc: refactor Add")
	writeFile(t, src.Dir, "README.md", "calc\n")
	head := commitAs(t, src, "Ann Good", "ann@example.com", "docs")
	// The fix, as a patch against head.
	writeFile(t, src.Dir, "calc/calc.go", "package calc\n\n// Add returns x+y.\nfunc Add(x, y int) int {\n\treturn x + y\n}\n")
	patch, err := src.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Git(ctx, "checkout", "-q", "--", "."); err != nil {
		t.Fatal(err)
	}

	srv := ghtest.New(t)
	srv.CreateRepo("acme", "calc", src.Dir)
	srv.AddUser("jane", "jane@example.com")
	srv.AddUser("calc-owner")
	app := srv.NewApp("redfix-test")
	srv.Install("acme", "acme/calc")
	traj := `{"step":1,"policy":"offline","action":{"name":"get_task_details","thought":"see what fails"},"observation":{"content":"TestAdd fails\nAdd(1, 2) = -1"},"elapsed_ms":1}
{"step":2,"policy":"offline","action":{"name":"read_file","args":{"path":"calc/calc.go"}},"observation":{"content":"package calc\n..."},"elapsed_ms":1}
{"step":3,"policy":"offline","action":{"name":"edit","args":{"path":"calc/calc.go","blocks":"..."},"thought":"the operator is wrong"},"observation":{"content":"applied","edit":{"applied":true}},"elapsed_ms":2}
{"step":4,"policy":"offline","action":{"name":"run_tests"},"observation":{"content":"ok","tests":{"ok":true,"passed":["example.com/calc/calc.TestAdd"]}},"elapsed_ms":300}
{"step":5,"policy":"offline","action":{"name":"exit","args":{"summary":"fixed"}},"observation":{"content":""},"elapsed_ms":0}
`
	return &ghFixture{srv: srv, app: app, owner: "acme", name: "calc", head: head, blame: blame, patch: patch, sleeps: &sleepLog{}, trajectory: []byte(traj)}
}

// publisher is one worker's publisher: its own clients and mirrors, the
// test GitHub its one forge.
func (f *ghFixture) publisher(t *testing.T) (*Forge, *github.Clients) {
	t.Helper()
	clients, err := github.New(github.Config{APIURL: f.srv.APIURL(), AppID: f.app.ID, PrivateKeyFile: f.app.KeyFile, Retry: github.Retry{Sleep: f.sleeps.sleep}})
	if err != nil {
		t.Fatal(err)
	}
	forges := forge.New(github.NewForge(clients))
	mirrors := &workspace.Mirrors{Dir: t.TempDir(), Auth: forges.GitEnv}
	return NewForge(forges, mirrors, golang.Driver{}, nil), clients
}

func (f *ghFixture) pr(judge string) PullRequest {
	return PullRequest{
		Task: task.Task{
			ID: "task-7", Fingerprint: "5e1f00d5e1f00d5e1f00d", Repo: f.srv.CloneURL(f.owner, f.name), Commit: f.head, Branch: "main",
			Failures: []task.Failure{{Package: "example.com/calc/calc", Test: "TestAdd", Message: "calc_test.go:7: Add(1, 2) = -1, want 3",
				Output: "=== RUN   TestAdd\n    calc_test.go:7: Add(1, 2) = -1, want 3\n--- FAIL: TestAdd (0.00s)\n"}},
			Flakiness: task.Flakiness{Runs: 3, Failures: 3, Verdict: "reliable"},
			Bisection: task.Bisection{Blame: f.blame, Subject: "calc: refactor Add", Author: "Jane Doe <jane@example.com>", Steps: 2},
		},
		Patch:      f.patch,
		Summary:    "Add subtracted; it adds again.",
		Trajectory: f.trajectory,
		Policy:     "offline",
		Steps:      5,
		Gates: []task.Gate{
			{Name: "oracle", Verdict: task.GatePass, Detail: "3/3 runs passed"},
			{Name: "judge", Verdict: judge, Detail: "no model configured"},
		},
	}
}

// pulls are the repository's pull requests, copied.
func (f *ghFixture) pulls() []ghtest.Pull {
	f.srv.Lock()
	defer f.srv.Unlock()
	repo, _ := f.srv.Repo(f.owner, f.name)
	var out []ghtest.Pull
	for _, p := range repo.Pulls {
		out = append(out, *p)
	}
	return out
}

func (f *ghFixture) git(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return f.srv.Git(f.owner, f.name, args...)
}

func TestGitHubPublishOpensOnePullRequest(t *testing.T) {
	f := newGHFixture(t)
	pub, _ := f.publisher(t)
	ctx := context.Background()
	pr := f.pr(task.GateNotRun)
	url, err := pub.Publish(ctx, pr)
	if err != nil {
		t.Fatal(err)
	}
	pulls := f.pulls()
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	p := pulls[0]
	if want := fmt.Sprintf("%s/pull/%d", f.srv.HTMLURL(f.owner, f.name), p.Number); url != want {
		t.Errorf("url %q, want %q", url, want)
	}
	if p.Title != Title(pr) || p.Head != Branch(pr.Task) || p.Base != "main" || !p.Draft {
		t.Errorf("pull request: title %q head %q base %q draft %v", p.Title, p.Head, p.Base, p.Draft)
	}
	// No judge passed it: a draft, labelled and headed as unreviewed.
	if strings.Join(p.Labels, ",") != Label+","+UnreviewedLabel {
		t.Errorf("labels %v, want %s and %s", p.Labels, Label, UnreviewedLabel)
	}
	if !strings.HasPrefix(p.Body, UnreviewedNotice) {
		t.Errorf("the body of an unreviewed patch does not start with the notice:\n%.300s", p.Body)
	}
	if strings.Join(p.Reviewers, ",") != "jane,calc-owner" || strings.Join(p.TeamReviewers, ",") != "calc-team" {
		t.Errorf("reviewers %v, teams %v; want the blame's author and the test's code owners", p.Reviewers, p.TeamReviewers)
	}
	html := f.srv.HTMLURL(f.owner, f.name)
	for _, want := range []string{
		"[`" + task.Short(f.blame) + "`](" + html + "/commit/" + f.blame + ")",
		"### [`example.com/calc/calc.TestAdd`](" + html + "/blob/" + f.head + "/calc/calc_test.go#L5)",
		"<details>\n<summary>The agent's 5 steps, one line each</summary>",
		"3. `edit` `calc/calc.go` → edited — _the operator is wrong_",
		"4. `run_tests` → tests pass (1)",
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, p.Body)
		}
	}
	// The branch holds the fix and not the trajectory.
	if src, err := f.git(t, "show", p.Head+":calc/calc.go"); err != nil || !strings.Contains(src, "return x + y") {
		t.Errorf("branch's calc.go: %q %v", src, err)
	}
	if files, _ := f.git(t, "ls-tree", "-r", "--name-only", p.Head); strings.Contains(files, "trajectory") {
		t.Errorf("the trajectory is on the pull request's branch:\n%s", files)
	}
	if parent, _ := f.git(t, "rev-parse", p.Head+"^"); strings.TrimSpace(parent) != f.head {
		t.Errorf("the fix's parent is %q, want the failing commit %s", parent, f.head)
	}
	// The whole trajectory is linked, on a commit of its own.
	j := strings.Index(p.Body, "/"+FileTrajectory+")")
	i := strings.LastIndex(p.Body[:max(j, 0)], html+"/blob/")
	if i < 0 || j < 0 {
		t.Fatalf("no link to %s in the body", FileTrajectory)
	}
	trajSHA := strings.TrimPrefix(p.Body[i:j], html+"/blob/")
	got, err := f.git(t, "show", trajSHA+":"+FileTrajectory)
	if err != nil || got != string(f.trajectory) {
		t.Errorf("linked trajectory: %v\n%q", err, got)
	}
	if refs, _ := f.git(t, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/"+TrajectoryRefPrefix); !strings.Contains(refs, trajSHA) {
		t.Errorf("the trajectory's commit is on no branch: %q", refs)
	}
	if _, err := f.git(t, "rev-parse", "--verify", trajSHA+"^"); err == nil {
		t.Error("the trajectory's commit has a parent")
	}

	// Redelivered: the same pull request, nothing pushed again.
	before := f.srv.GitStatsOf(f.owner, f.name).ReceivePacks
	again, err := pub.Publish(ctx, pr)
	if err != nil || again != url {
		t.Fatalf("second publish: %q %v, want %q", again, err, url)
	}
	if n := len(f.pulls()); n != 1 {
		t.Errorf("%d pull requests after a redelivery", n)
	}
	if after := f.srv.GitStatsOf(f.owner, f.name).ReceivePacks; after != before {
		t.Errorf("a redelivery pushed again (%d → %d receive-packs)", before, after)
	}
}

func TestGitHubPublishIsReadyForReviewWhenTheJudgeAccepted(t *testing.T) {
	f := newGHFixture(t)
	pub, _ := f.publisher(t)
	if _, err := pub.Publish(context.Background(), f.pr(task.GatePass)); err != nil {
		t.Fatal(err)
	}
	p := f.pulls()
	if len(p) != 1 || p[0].Draft {
		t.Fatalf("pull requests %+v, want one, not a draft", p)
	}
	if strings.Join(p[0].Labels, ",") != Label || strings.Contains(p[0].Body, "Not reviewed by a model") {
		t.Errorf("a judged patch is marked unreviewed: labels %v, body:\n%.300s", p[0].Labels, p[0].Body)
	}
}

func TestGitHubPublishRetriesA502OnCreate(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("answer lost after creating: %v", after), func(t *testing.T) {
			f := newGHFixture(t)
			pub, _ := f.publisher(t)
			f.srv.Inject("POST", "/repos/{owner}/{repo}/pulls", 1, ghtest.Fault{Status: 502, After: after})
			url, err := pub.Publish(context.Background(), f.pr(task.GateNotRun))
			if err != nil {
				t.Fatal(err)
			}
			pulls := f.pulls()
			if len(pulls) != 1 || !strings.HasSuffix(url, fmt.Sprintf("/pull/%d", pulls[0].Number)) {
				t.Fatalf("pull requests %d, url %q", len(pulls), url)
			}
			calls := f.srv.CallsTo("POST", "/repos/{owner}/{repo}/pulls")
			if len(calls) != 2 || calls[0].Status != 502 {
				t.Fatalf("create calls %+v, want a 502 then a retry", calls)
			}
			if got := f.sleeps.got(); len(got) != 1 || got[0] != time.Second {
				t.Errorf("waits %v, want one backoff of 1s", got)
			}
		})
	}
}

func TestGitHubPublishHonoursSecondaryRateLimit(t *testing.T) {
	f := newGHFixture(t)
	pub, _ := f.publisher(t)
	f.srv.Inject("POST", "/repos/{owner}/{repo}/pulls", 1, ghtest.SecondaryRateLimit(42*time.Second))
	if _, err := pub.Publish(context.Background(), f.pr(task.GateNotRun)); err != nil {
		t.Fatal(err)
	}
	if got := f.sleeps.got(); len(got) != 1 || got[0] != 42*time.Second {
		t.Fatalf("waits %v, want the advertised 42s", got)
	}
	calls := f.srv.CallsTo("POST", "/repos/{owner}/{repo}/pulls")
	if len(calls) != 2 || calls[0].Status != 403 || calls[1].Status != 201 {
		t.Fatalf("create calls %+v, want 403 then 201", calls)
	}
	if n := len(f.pulls()); n != 1 {
		t.Fatalf("%d pull requests", n)
	}
}

func TestGitHubPublishFailureAfterPushLeavesNoBranch(t *testing.T) {
	f := newGHFixture(t)
	pub, _ := f.publisher(t)
	f.srv.Inject("POST", "/repos/{owner}/{repo}/pulls", 5, ghtest.Fault{Status: 502})
	pr := f.pr(task.GateNotRun)
	if _, err := pub.Publish(context.Background(), pr); err == nil {
		t.Fatal("publish succeeded through five 502s")
	}
	if n := len(f.pulls()); n != 0 {
		t.Fatalf("%d pull requests", n)
	}
	if f.srv.GitStatsOf(f.owner, f.name).ReceivePacks == 0 {
		t.Fatal("nothing was pushed: the test does not test a failure after the push")
	}
	if refs, _ := f.git(t, "for-each-ref", "refs/heads/redfix", "refs/heads/"+TrajectoryRefPrefix); strings.TrimSpace(refs) != "" {
		t.Errorf("branches left behind:\n%s", refs)
	}
	// The next attempt publishes.
	if _, err := pub.Publish(context.Background(), pr); err != nil {
		t.Fatal(err)
	}
	if n := len(f.pulls()); n != 1 {
		t.Fatalf("%d pull requests after the retry", n)
	}
}

func TestGitHubPublishersRacingOpenOnePullRequest(t *testing.T) {
	f := newGHFixture(t)
	pubs := []*Forge{}
	for range 3 {
		p, _ := f.publisher(t)
		pubs = append(pubs, p)
	}
	urls := make([]string, len(pubs))
	errs := make([]error, len(pubs))
	var wg sync.WaitGroup
	for i, p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := f.pr(task.GateNotRun)
			pr.Task.ID = fmt.Sprintf("task-%d", i) // redelivered as different tasks of one group
			urls[i], errs[i] = p.Publish(context.Background(), pr)
		}()
	}
	wg.Wait()
	for i := range pubs {
		if errs[i] != nil {
			t.Fatalf("publisher %d: %v", i, errs[i])
		}
		if urls[i] != urls[0] {
			t.Errorf("publisher %d reported %q, publisher 0 %q", i, urls[i], urls[0])
		}
	}
	if n := len(f.pulls()); n != 1 {
		t.Fatalf("%d pull requests, want 1", n)
	}
}

func TestGitHubPublishKeepsTokensOut(t *testing.T) {
	f := newGHFixture(t)
	pub, clients := f.publisher(t)
	ctx := context.Background()
	c, err := clients.ForRepo(ctx, f.owner, f.name)
	if err != nil {
		t.Fatal(err)
	}
	token, err := c.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pat := "ghp_" + strings.Repeat("Z", 36)
	pr := f.pr(task.GateNotRun)
	pr.Task.Failures[0].Output += "    calc_test.go:9: leaked " + token + " and " + pat + "\n"
	pr.Task.Failures[0].Message += " " + token
	pr.Summary += " token " + token
	step, _ := json.Marshal(map[string]any{"step": 6, "action": map[string]any{"name": "run_tests"}, "observation": map[string]any{"content": "env: " + token + " " + pat}})
	pr.Trajectory = append(append([]byte{}, pr.Trajectory...), append(step, '\n')...)
	if _, err := pub.Publish(ctx, pr); err != nil {
		t.Fatal(err)
	}
	p := f.pulls()[0]
	if strings.Contains(p.Body, token) || strings.Contains(p.Body, pat) || !strings.Contains(p.Body, "[redacted]") {
		t.Errorf("the body holds a token, or redacted nothing:\n%s", p.Body)
	}
	out, err := f.git(t, "log", "--all", "-p", "--format=%B")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"refs/heads/" + TrajectoryRefPrefix} {
		files, _ := f.git(t, "for-each-ref", "--format=%(objectname)", ref)
		for _, sha := range strings.Fields(files) {
			for _, name := range []string{FileTrajectory, FilePullRequest} {
				data, _ := f.git(t, "show", sha+":"+name)
				out += data
			}
		}
	}
	if strings.Contains(out, token) || strings.Contains(out, pat) {
		t.Error("a token was pushed (in a commit, the trajectory or the description)")
	}
}

func TestBodyWithTrajectoryFitsGitHubsLimit(t *testing.T) {
	pr := samplePR()
	var traj strings.Builder
	for i := 1; i <= 4000; i++ {
		fmt.Fprintf(&traj, `{"step":%d,"action":{"name":"read_file","args":{"path":"pkg/some/long/path/file_%d.go"},"thought":"%s"},"observation":{"content":"x"}}`+"\n", i, i, strings.Repeat("because ", 20))
	}
	pr.Trajectory = []byte(traj.String())
	pr.Steps = 4000
	links := Links{Commit: func(s string) string { return "https://gh.example/o/r/commit/" + s }, Trajectory: "https://gh.example/o/r/blob/abc/trajectory.jsonl", Attachments: "[x](y)"}
	body := BodyWith(pr, links)
	if n := utf8.RuneCountInString(body); n > MaxBodyChars {
		t.Fatalf("body of %d characters", n)
	}
	if !strings.Contains(body, "steps left out here to stay within GitHub's size limit") || !strings.Contains(body, "1. `read_file`") || !strings.Contains(body, "4000. `read_file`") {
		t.Error("a long trajectory is not shortened visibly, first and last steps kept")
	}
	// A body whose evidence alone is over the limit is cut, and says so.
	pr.Task.Failures[0].Output = strings.Repeat(strings.Repeat("y", 3000)+"\n", 19)
	pr.Task.Failures = []task.Failure{pr.Task.Failures[0], pr.Task.Failures[0], pr.Task.Failures[0]}
	body = BodyWith(pr, links)
	if n := utf8.RuneCountInString(body); n > MaxBodyChars || !strings.Contains(body, "This body was cut at GitHub's limit") {
		t.Errorf("oversized evidence: %d characters, cut note present %v", n, strings.Contains(body, "was cut"))
	}
	if strings.Count(body, "```")%2 != 0 {
		t.Error("the cut left a code block open")
	}
}

func TestCodeOwners(t *testing.T) {
	co := ParseCodeOwners("# comment\n* @everyone-team\n*.go @gophers\n/docs/ @docs\napps/ @apps # trailing\n/build/**/logs @logs\n/calc/calc_test.go @calc-tester\n")
	for path, want := range map[string]string{
		"README.md":            "@everyone-team",
		"x/y.go":               "@gophers",
		"docs/a/b.txt":         "@docs",
		"src/docs/a.txt":       "@everyone-team",
		"x/apps/y.txt":         "@apps",
		"build/a/b/logs/x.log": "@logs",
		"build/logs":           "@logs",
		"calc/calc_test.go":    "@calc-tester",
		"calc/calc.go":         "@gophers",
	} {
		if got := strings.Join(co.Owners(path), " "); got != want {
			t.Errorf("Owners(%q) = %q, want %q", path, got, want)
		}
	}
}
