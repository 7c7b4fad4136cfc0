package deliveries_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/gitlab/deliveries"
	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/task"
)

const (
	botToken = "glpat-deliveries0123456789abcdef"
	project  = "acme/payments/ledger"
)

// state is the store's part the processor uses, in memory.
type state struct {
	mu     sync.Mutex
	claims map[string]string
	fixes  map[string]task.Fix // by key#number
	closed []string
}

func (s *state) ClaimRun(_ context.Context, run, owner string, _ time.Duration) (bool, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.claims[run]; ok {
		return h == owner, h, nil
	}
	s.claims[run] = owner
	return true, owner, nil
}

func (s *state) ReleaseRun(_ context.Context, run, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.claims[run] == owner {
		delete(s.claims, run)
	}
	return nil
}

func (s *state) RecordClosed(_ context.Context, repo string, n int, merged, edited bool, _ time.Time) (task.Fix, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.fixes[repo+"#"+itoa(n)]
	if !ok {
		return task.Fix{}, task.ErrNoFix
	}
	f.State = task.FixClosed
	if merged {
		f.State = task.FixLanded
		if edited {
			f.State = task.FixLandedWithEdits
		}
	}
	s.closed = append(s.closed, repo+"#"+itoa(n)+" "+string(f.State))
	return f, nil
}

func (s *state) RecordReopened(_ context.Context, repo string, n int) (task.Fix, error) {
	return task.Fix{}, task.ErrNoFix
}

func (s *state) Revisions(context.Context, string, int) (int, error) { return 0, nil }

func (s *state) RecordReview(context.Context, string, int, string, time.Time) (task.Fix, error) {
	return task.Fix{}, task.ErrNoFix
}

func itoa(n int) string { return strconv.Itoa(n) }

// commands keeps the comments handed to it.
type commands struct{ got []forge.Comment }

func (c *commands) Comment(_ context.Context, cm forge.Comment) (string, error) {
	c.got = append(c.got, cm)
	return "answered", nil
}

func (c *commands) Reviewed(context.Context, forge.Review) (string, error) { return "heard", nil }

// world is a test GitLab with a project in a subgroup whose main is red.
type world struct {
	srv   *gltest.Server
	bot   *gltest.User
	dana  *gltest.User
	d     *gitlab.Forge
	shas  []string
	state *state
	cmds  *commands
	p     *deliveries.Processor
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{srv: gltest.New(t), state: &state{claims: map[string]string{}, fixes: map[string]task.Fix{}}, cmds: &commands{}}
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "green"}, {"commit", "-q", "--allow-empty", "-m", "red"},
		{"checkout", "-q", "-b", "redfix/fix"}, {"commit", "-q", "--allow-empty", "-m", "fix"}, {"checkout", "-q", "main"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	w.bot = w.srv.AddUser("redfix-bot", "redfix@example.com", botToken)
	w.dana = w.srv.AddUser("dana", "dana@example.com", "")
	w.srv.CreateProject(project, dir)
	w.srv.AddGroupMember("acme", w.bot, gltest.Developer)
	out, _ := w.srv.Git(project, "rev-list", "main")
	w.shas = strings.Fields(out)
	var err error
	if w.d, err = gitlab.New(gitlab.Config{URL: w.srv.URL, Token: botToken}); err != nil {
		t.Fatal(err)
	}
	w.p = &deliveries.Processor{Forge: w.d, State: w.state, Commands: w.cmds, Log: zap.NewNop()}
	return w
}

func (w *world) process(t *testing.T, id, ev string, payload []byte) (deliveries.Result, error) {
	t.Helper()
	return w.p.Process(context.Background(), ingest.Submission{ID: id, Kind: event.Kind, Event: ev, Payload: payload})
}

// TestProcessPipelines: a failed pipeline on main becomes its report for
// triage (the project's clone URL on the instance, the red commit, the
// last green pipeline's commit, the failures its job kept); another
// delivery of the same pipeline is not triaged twice; a pipeline whose
// jobs left no report is settled with a note, keeping its claim.
func TestProcessPipelines(t *testing.T) {
	w := newWorld(t)
	w.srv.AddPipeline(project, "main", w.shas[1], "push", w.dana, &gltest.Job{Name: "unit", Status: "success"})
	red := w.srv.AddPipeline(project, "main", w.shas[0], "push", w.dana, &gltest.Job{Name: "unit", Status: "failed",
		JUnit: []byte(`<testsuite name="go"><testcase classname="example.com/ledger" name="TestBalance"><failure>ledger_test.go:9: Balance() = 99, want 100</failure></testcase></testsuite>`)})
	payload := w.srv.PipelinePayload(project, red)
	res, err := w.process(t, "d1", event.Pipeline, payload)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r == nil || r.Repo != w.srv.CloneURL(project) || r.Commit != w.shas[0] || r.Good != w.shas[1] || r.Branch != "main" || len(r.Parsed.Failures) != 1 || res.Release == nil {
		t.Fatalf("report %+v (note %q)", r, res.Note)
	}
	if again, err := w.process(t, "d2", event.Pipeline, payload); err != nil || again.Report != nil || !strings.Contains(again.Note, "already triaged") {
		t.Errorf("the same pipeline from another delivery: %+v, %v", again, err)
	}
	lint := w.srv.AddPipeline(project, "main", w.shas[0], "push", w.dana, &gltest.Job{Name: "lint", Status: "failed", Trace: "3 issues\n"})
	res, err = w.process(t, "d3", event.Pipeline, w.srv.PipelinePayload(project, lint))
	if err != nil || res.Report != nil || !strings.Contains(res.Note, "no test report") {
		t.Errorf("a pipeline without tests: %+v, %v", res, err)
	}
	if len(w.state.claims) != 2 {
		t.Errorf("claims %v: want the red pipeline's and the lint pipeline's", w.state.claims)
	}
	w.p.Forge = nil
	if _, err := w.process(t, "d4", event.Pipeline, payload); !errors.Is(err, ingest.ErrInvalid) {
		t.Errorf("without a token: %v, want ErrInvalid", err)
	}
}

// TestProcessOutcomesAndNotes: the merging of redfix's merge request is
// its fix's landing, under the host and full path, not edited when it
// holds redfix's commit alone; closing another is ignored when it is no
// fix; a /redfix note goes to the commands in the forge's words, redfix's
// own note marked as a bot's.
func TestProcessOutcomesAndNotes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	repo := w.d.Repo(project)
	mr, err := w.d.OpenChangeRequest(ctx, repo, forge.NewChangeRequest{Title: "fix", Body: "b", Head: "redfix/fix", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	key := w.d.FixKey(repo)
	w.state.fixes[key+"#"+itoa(mr.Number)] = task.Fix{Repo: key, Number: mr.Number, TaskID: "t1"}
	n := w.srv.AddNote(project, int64(mr.Number), w.dana, "/redfix explain")
	if _, err := w.process(t, "n1", event.Note, w.srv.NotePayload(project, int64(mr.Number), n)); err != nil {
		t.Fatal(err)
	}
	own := w.srv.AddNote(project, int64(mr.Number), w.bot, "/redfix retry")
	if _, err := w.process(t, "n2", event.Note, w.srv.NotePayload(project, int64(mr.Number), own)); err != nil {
		t.Fatal(err)
	}
	if len(w.cmds.got) != 2 {
		t.Fatalf("commands %+v", w.cmds.got)
	}
	c := w.cmds.got[0]
	if !c.Repo.Same(repo) || c.Number != mr.Number || c.ID != n.ID || c.Author.Login != "dana" || c.Author.Bot || c.Body != "/redfix explain" || !c.OnChangeRequest {
		t.Errorf("the note came in as %+v", c)
	}
	if !w.cmds.got[1].Author.Bot {
		t.Errorf("redfix's own note came in as a person's: %+v", w.cmds.got[1])
	}
	w.srv.Merge(project, int64(mr.Number))
	res, err := w.process(t, "m1", event.MergeRequest, w.srv.MergeRequestPayload(project, int64(mr.Number), "merge", w.dana))
	if err != nil || res.Note != "fix landed" {
		t.Errorf("merged: %+v, %v", res, err)
	}
	if want := strings.ToLower(w.d.Host()) + "/" + project + "#1 landed"; len(w.state.closed) != 1 || w.state.closed[0] != want {
		t.Errorf("outcomes %v, want [%s]", w.state.closed, want)
	}
}

// TestProcessMergeRequestPipelines: a merge request's pipeline is a fork's
// when its merge request's source project is another, as the API says it,
// not the delivery: a webhook's payload and a resync's listing (which
// names no source project) alike. A fork's report names the fork (its
// path, or its id when the token cannot read it) and the branch the merge
// request merges into, where its fix can go; the project's own merge
// request's names none and its own branch. Triage then holds the fork's
// to the opt-ins.
func TestProcessMergeRequestPipelines(t *testing.T) {
	w := newWorld(t)
	w.p.Filter = event.Filter{Projects: []event.Project{{Name: "acme/**", MergeRequests: true}}}
	red := func() *gltest.Job {
		return &gltest.Job{Name: "unit", Status: "failed",
			JUnit: []byte(`<testsuite name="go"><testcase classname="example.com/ledger" name="TestBalance"><failure>want 100</failure></testcase></testsuite>`)}
	}
	mallory := w.srv.AddUser("mallory", "mallory@example.com", "")
	w.srv.CreateProject("mallory/ledger", w.srv.RepoDir(project))
	w.srv.CreateProject("hidden/ledger", w.srv.RepoDir(project))
	w.srv.AddMember("mallory/ledger", w.bot, gltest.Reporter)
	for _, c := range []struct {
		name, fork, branch string
		mr                 func() *gltest.MergeRequest
	}{
		{name: "own", branch: "redfix/fix", mr: func() *gltest.MergeRequest {
			cr, err := w.d.OpenChangeRequest(context.Background(), w.d.Repo(project), forge.NewChangeRequest{Title: "own", Body: "b", Head: "redfix/fix", Base: "main"})
			if err != nil {
				t.Fatal(err)
			}
			w.srv.Lock()
			defer w.srv.Unlock()
			return w.srv.MR(project, int64(cr.Number))
		}},
		{name: "fork", fork: "mallory/ledger", branch: "main", mr: func() *gltest.MergeRequest {
			return w.srv.OpenForkMergeRequest(project, "mallory/ledger", "redfix/fix", mallory)
		}},
		{name: "fork the token cannot read", fork: "project ", branch: "main", mr: func() *gltest.MergeRequest {
			return w.srv.OpenForkMergeRequest(project, "hidden/ledger", "redfix/fix", mallory)
		}},
	} {
		mr := c.mr()
		pl := w.srv.AddMergeRequestPipeline(project, mr, mallory, red())
		hook := w.srv.PipelinePayload(project, pl)
		// What a resync stores: the pipeline as listed, no merge request.
		listed, err := w.d.FailedPipelines(context.Background(), project, time.Now().Add(-time.Hour))
		if err != nil || len(listed) == 0 || listed[0].ObjectAttributes.ID != pl.ID {
			t.Fatalf("%s: listed %d pipelines, %v", c.name, len(listed), err)
		}
		for i, payload := range [][]byte{hook, marshal(t, listed[0])} {
			w.state.claims = map[string]string{}
			res, err := w.process(t, c.name+itoa(i), event.Pipeline, payload)
			if err != nil || res.Report == nil {
				t.Fatalf("%s (%d): %+v, %v", c.name, i, res, err)
			}
			r := res.Report
			if !strings.HasPrefix(r.Fork, c.fork) || (c.fork == "") != (r.Fork == "") || r.Branch != c.branch || r.Repo != w.srv.CloneURL(project) || r.Commit != mr.SHA {
				t.Errorf("%s (%d): fork %q, branch %q, repo %s, commit %s; want fork %q…, branch %q, the project's repository at %s", c.name, i, r.Fork, r.Branch, r.Repo, r.Commit, c.fork, c.branch, mr.SHA)
			}
		}
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
