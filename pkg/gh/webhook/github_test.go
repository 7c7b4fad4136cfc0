package webhook

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gh/ghtest"
	"github.com/redfix/redfix/pkg/gh/runreport"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/store"
)

const goTestJSON = `{"Action":"run","Package":"example.com/m/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestAdd","Output":"    calc_test.go:9: Add(1, 2) = -1, want 3\n"}
{"Action":"fail","Package":"example.com/m/calc","Test":"TestAdd","Elapsed":0}
{"Action":"fail","Package":"example.com/m/calc","Elapsed":0.01}
`

type ghFixture struct {
	srv     *ghtest.Server
	clients *gh.Clients
	store   *store.Store
	proc    *Processor
	repo    *github.Repository
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
	clients, err := gh.New(gh.Config{APIURL: srv.APIURL(), AppID: app.ID, PrivateKeyFile: app.KeyFile})
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
		Client: func(ctx context.Context, owner, name string) (*github.Client, error) {
			c, err := clients.ForRepo(ctx, owner, name)
			if err != nil {
				return nil, err
			}
			return c.Client, nil
		},
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
	return edit(t, example(t, ex, "workflow_run", "completed"), func(m map[string]any) {
		m["workflow_run"] = run
		var repo map[string]any
		b, _ := json.Marshal(f.repo)
		_ = json.Unmarshal(b, &repo)
		m["repository"] = repo
	})
}

func TestRunTriagedOnce(t *testing.T) {
	ex := examples(t)
	f := newGHFixture(t)
	ctx := context.Background()
	payload := f.runPayload(t, ex, f.failed.ID)
	sub := ingest.Submission{ID: "d-1", Kind: ingest.KindGitHub, Event: EventWorkflowRun, Payload: payload}
	res, err := f.proc.Process(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r == nil {
		t.Fatalf("no report: %s", res.Note)
	}
	if r.Repo != f.srv.CloneURL("acme", "calc") || r.Commit != f.failed.HeadSHA || r.Good != "1111111111111111111111111111111111111111" || r.Branch != "main" {
		t.Errorf("report %+v", r)
	}
	rep, err := report.Parse(r.Report)
	if err != nil || len(rep.Failures) != 1 || rep.Failures[0].Test != "TestAdd" {
		t.Fatalf("report: %+v, %v", rep, err)
	}
	// The same delivery again (the stream redelivers after a failed
	// triage): it still owns the run.
	if res, err := f.proc.Process(ctx, sub); err != nil || res.Report == nil {
		t.Errorf("the claiming delivery's retry: %+v, %v", res, err)
	}
	// Another delivery of the same run: triaged once.
	res, err = f.proc.Process(ctx, ingest.Submission{ID: "resync:x", Kind: ingest.KindGitHub, Event: EventWorkflowRun, Payload: payload})
	if err != nil || res.Report != nil {
		t.Errorf("a second delivery of the run: %+v, %v", res, err)
	}
	// Once its triage gave up for good, the run may be taken again.
	res0, _ := f.proc.Process(ctx, sub)
	res0.Release(ctx)
	if res, err := f.proc.Process(ctx, ingest.Submission{ID: "resync:x", Kind: ingest.KindGitHub, Event: EventWorkflowRun, Payload: payload}); err != nil || res.Report == nil {
		t.Errorf("after a release: %+v, %v", res, err)
	}
}

func TestResync(t *testing.T) {
	ex := examples(t)
	f := newGHFixture(t)
	ctx := context.Background()
	js := embeddedtest.JetStream(t)
	in, err := ingest.Open(ctx, js, ingest.Config{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// g-1 failed, then its redelivery answered 200: nothing to do.
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-1", Event: "workflow_run", Action: "completed", StatusCode: 502, DeliveredAt: now.Add(-2 * time.Hour)})
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-1", Event: "workflow_run", Action: "completed", StatusCode: 202, Redelivery: true, DeliveredAt: now.Add(-time.Hour)})
	// g-2 never got through.
	g2 := f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-2", Event: "pull_request", Action: "closed", StatusCode: 503, DeliveredAt: now.Add(-30 * time.Minute)})
	// g-3 is an event redfix does not act on; g-4 is older than the lookback.
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-3", Event: "push", StatusCode: 500, DeliveredAt: now.Add(-time.Minute)})
	f.srv.AddHookDelivery(ghtest.HookDelivery{GUID: "g-4", Event: "workflow_run", Action: "completed", StatusCode: 500, DeliveredAt: now.Add(-50 * time.Hour)})

	rs := &Resync{
		Repos:  func(context.Context) ([]*github.Repository, error) { return []*github.Repository{f.repo}, nil },
		Client: f.proc.Client, App: f.clients.App(), Intake: in, Asked: f.store, Log: zaptest.NewLogger(t),
	}
	p, err := rs.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs != 1 || p.Redelivered != 1 {
		t.Errorf("first pass: %+v, want 1 failed run on main and 1 redelivery", p)
	}
	if got := f.srv.Redelivered(); len(got) != 1 || got[0] != g2.ID {
		t.Errorf("redelivered %v, want [%d]", got, g2.ID)
	}
	p, err = rs.Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs != 0 || p.Seen != 1 || p.Redelivered != 0 {
		t.Errorf("second pass: %+v, want the run seen before and no new redelivery", p)
	}

	// The webhook's delivery of the run is triaged; the resync's copy of it
	// is not, whichever comes first.
	if res, err := f.proc.Process(ctx, ingest.Submission{ID: "d-1", Kind: ingest.KindGitHub, Event: EventWorkflowRun, Payload: f.runPayload(t, ex, f.failed.ID)}); err != nil || res.Report == nil {
		t.Fatalf("webhook delivery: %+v, %v", res, err)
	}
	var stored ingest.Submission
	stream, err := js.Stream(ctx, "REDFIX_REPORTS")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(msg.Data, &stored); err != nil {
		t.Fatal(err)
	}
	if res, err := f.proc.Process(ctx, stored); err != nil || res.Report != nil {
		t.Errorf("the resync's delivery of a run already triaged: %+v, %v", res, err)
	}
}
