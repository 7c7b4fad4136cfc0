package deliveries

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/forge/github/runreport"
	"github.com/redfix/redfix/pkg/store"
)

const goTestJSON = `{"Action":"run","Package":"example.com/m/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestAdd","Output":"    calc_test.go:9: Add(1, 2) = -1, want 3\n"}
{"Action":"fail","Package":"example.com/m/calc","Test":"TestAdd","Elapsed":0}
{"Action":"fail","Package":"example.com/m/calc","Elapsed":0.01}
`

type ghFixture struct {
	srv     *ghtest.Server
	clients *github.Clients
	store   *store.Store
	proc    *Processor
	repo    *gogithub.Repository
	failed  *ghtest.WorkflowRun
}

// newGHFixture is a test GitHub with the App installed on acme/calc, a
// green run and a failed one with a go test -json artifact.
func newGHFixture(t *testing.T) *ghFixture {
	t.Helper()
	srv := ghtest.New(t)
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "git init -q -b main && git commit -q --allow-empty -m first")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srv.CreateRepo("acme", "calc", dir)
	app := srv.NewApp("redfix")
	srv.Install("acme", "acme/calc")
	clients, err := github.New(github.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	srv.AddRun("acme", "calc", ghtest.WorkflowRun{Name: "CI", HeadBranch: "main", HeadSHA: "1111111111111111111111111111111111111111", Conclusion: "success", CreatedAt: t0.Add(-time.Hour)})
	failed := srv.AddRun("acme", "calc", ghtest.WorkflowRun{
		Name: "CI", HeadBranch: "main", HeadSHA: "2222222222222222222222222222222222222222", Conclusion: "failure", CreatedAt: t0,
		Jobs:      []*ghtest.Job{{Name: "test", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: "test-results", Zip: ghtest.Zip(map[string][]byte{"go.json": []byte(goTestJSON)})}},
	})
	// A run on a feature branch, failed too: not the default branch.
	srv.AddRun("acme", "calc", ghtest.WorkflowRun{Name: "CI", HeadBranch: "feature", HeadSHA: "3333333333333333333333333333333333333333", Conclusion: "failure", CreatedAt: t0})
	cl, err := clients.ForRepo(context.Background(), "acme", "calc")
	if err != nil {
		t.Fatal(err)
	}
	repo, _, err := cl.Repositories.Get(context.Background(), "acme", "calc")
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(embeddedtest.Redis(t), "gh-test")
	f := &ghFixture{srv: srv, clients: clients, store: st, repo: repo, failed: failed}
	f.proc = &Processor{
		Forge:     github.NewForge(clients),
		Collector: &runreport.Collector{},
		State:     st,
		Log:       zaptest.NewLogger(t),
	}
	return f
}

// runPayload is the published workflow_run example carrying the test
// GitHub's run and repository.
func (f *ghFixture) runPayload(t *testing.T, ex map[string][]json.RawMessage, id int64) json.RawMessage {
	t.Helper()
	run, err := f.srv.RunJSON("acme", "calc", id)
	if err != nil {
		t.Fatal(err)
	}
	return ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "workflow_run", "completed"), func(m map[string]any) {
		m["workflow_run"] = run
		var repo map[string]any
		b, _ := json.Marshal(f.repo)
		_ = json.Unmarshal(b, &repo)
		m["repository"] = repo
	})
}
