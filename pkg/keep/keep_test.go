package keep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

func TestVerdict(t *testing.T) {
	tests := []string{"p.TestA", "p.TestB"}
	for _, c := range []struct {
		name            string
		passed, missing []string
		failed          bool
		want            string
	}{
		{"all pass", tests, nil, false, "pass on `main`"},
		{"one still fails", []string{"p.TestA"}, nil, true, ""},
		{"one gone, one passes", []string{"p.TestA"}, []string{"p.TestB"}, false, "no longer exist"},
		{"one not run, not missing", []string{"p.TestA"}, nil, false, ""},
	} {
		reason, got := Verdict(tests, c.passed, c.missing, c.failed, "main", "c0ffee")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) || (reason == "") != (got == "") {
			t.Errorf("%s: %s %q, want %q", c.name, reason, got, c.want)
		}
	}
}

// TestKeeperClosesAfterAPersonsFix: the bot's pull request stays open
// while the default branch still fails its test, and is closed with a
// comment saying why once a person's fix lands there.
func TestKeeperClosesAfterAPersonsFix(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "calc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(files map[string]string, msg string) string {
		t.Helper()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := repo.CommitAll(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	commit(map[string]string{"go.mod": "module example.com/calc\n\ngo 1.21\n",
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(Add(2, 2))\n\t}\n}\n"}, "calc: add")
	red := commit(map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n"}, "calc: faster")
	fixed := commit(map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return b + a }\n"}, "calc: add again (a person's fix)")

	srv := ghtest.New(t)
	srv.CreateRepo("acme", "calc", dir)
	app := srv.NewApp("redfix")
	srv.Install("acme", "acme/calc")
	if _, err := srv.Git("acme", "calc", "update-ref", "refs/heads/main", red); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Git("acme", "calc", "branch", "redfix/calc", red); err != nil {
		t.Fatal(err)
	}
	srv.Lock()
	r, _ := srv.Repo("acme", "calc")
	r.Pulls = append(r.Pulls, &ghtest.Pull{ID: srv.NewID(), Number: 1, Title: "fix: TestAdd", Head: "redfix/calc", Base: "main", HeadSHA: red,
		State: "open", User: "redfix[bot]", CreatedAt: time.Now(), UpdatedAt: time.Now()})
	srv.Unlock()

	clients, err := github.New(github.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(embeddedtest.Redis(t), "test")
	tk := task.Task{ID: "t1", Fingerprint: "fp1", Repo: srv.HTMLURL("acme", "calc"), Commit: red, Status: task.StatusPublished,
		Failures: []task.Failure{{Package: "example.com/calc", Test: "TestAdd"}}, PullRequest: srv.HTMLURL("acme", "calc") + "/pull/1"}
	if err := st.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordPublished(ctx, task.Fix{Repo: "acme/calc", Number: 1, URL: tk.PullRequest, TaskID: "t1", Fingerprint: "fp1"}); err != nil {
		t.Fatal(err)
	}
	langs := &countingLanguages{Drivers: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}})}
	k := &Keeper{Fixes: st, Forges: forge.New(github.NewForge(clients)),
		Checkouts: &workspace.Mirrors{Dir: filepath.Join(t.TempDir(), "mirrors"), Auth: clients.GitEnvFor},
		Languages: langs, Kept: st,
		WorkDir: t.TempDir(), Log: zaptest.NewLogger(t)}

	// The default branch moved, and still fails: the pull request stays.
	moved := strings.TrimSpace(must(srv.Git("acme", "calc", "commit-tree", "-m", "docs", red+"^{tree}", "-p", red)))
	if _, err := srv.Git("acme", "calc", "update-ref", "refs/heads/main", moved); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second pass does not run the tests again at the same head
		if c, err := k.Pass(ctx); err != nil || c != (Counts{Open: 1}) {
			t.Fatalf("pass while main fails: %+v, %v", c, err)
		}
	}
	if n := langs.runs.Load(); n != 1 {
		t.Errorf("the tests ran %d times at one head, want once", n)
	}
	// A person's fix lands.
	if _, err := srv.Git("acme", "calc", "update-ref", "refs/heads/main", fixed); err != nil {
		t.Fatal(err)
	}
	if c, err := k.Pass(ctx); err != nil || c != (Counts{Open: 1, Fixed: 1}) {
		t.Fatalf("pass after the fix landed: %+v, %v", c, err)
	}
	srv.Lock()
	state := r.Pulls[0].State
	srv.Unlock()
	comments := srv.Comments("acme", "calc", 1)
	if state != "closed" || len(comments) != 1 || !strings.Contains(comments[0].Body, "pass on `main`") {
		t.Errorf("pull request %s, comments %+v", state, comments)
	}
	if f, err := st.GetFix(ctx, "acme/calc", 1); err != nil || f.State != task.FixClosed || f.ClosedByBot != task.CloseFixed {
		t.Errorf("the fix's record: %+v %v", f, err)
	}
}

// countingLanguages counts the checkouts whose tests are run.
type countingLanguages struct {
	*lang.Drivers
	runs atomic.Int32
}

func (c *countingLanguages) For(repo, dir string) (lang.Driver, error) {
	c.runs.Add(1)
	return c.Drivers.For(repo, dir)
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
