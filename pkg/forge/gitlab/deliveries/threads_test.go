package deliveries_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/command"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitlab/deliveries"
	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// queued keeps the jobs the commands queue.
type queued struct {
	mu   sync.Mutex
	jobs []job.Job
}

func (q *queued) Enqueue(_ context.Context, j job.Job) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, j)
	return false, nil
}

func (q *queued) revisions() []*job.Revision {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*job.Revision
	for _, j := range q.jobs {
		if j.Revision != nil {
			out = append(out, j.Revision)
		}
	}
	return out
}

// TestThreadsRequestChanges: on GitLab, a reviewer asks for changes by
// opening a thread and leaving it unresolved. On redfix's merge request,
// a thread opened by a member who may write (Developer, as the member
// API answers) starts one revision with the thread's words, as GitHub's
// review requesting changes does, and the fix records changes requested.
// A thread by a Reporter, by an account that is no member whose payload
// claims a Developer's name, by redfix itself, a reply in a thread, and a
// thread resolved before its delivery is processed start none.
func TestThreadsRequestChanges(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "")
	q := &queued{}
	w.p.State = st
	w.p.Commands = &command.Handler{Forge: w.d, State: st, Jobs: q, MaxRevisions: 3, Log: zap.NewNop()}
	repo := w.d.Repo(project)
	mr, err := w.d.OpenChangeRequest(ctx, repo, forge.NewChangeRequest{Title: "fix", Body: "b", Head: "redfix/fix", Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	key, iid := w.d.FixKey(repo), int64(mr.Number)
	tk := task.Task{ID: "t1", Repo: w.srv.CloneURL(project), Commit: w.shas[0], Fingerprint: "fp1", Status: task.StatusPublished, CreatedAt: time.Now().UTC()}
	if err := st.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordPublished(ctx, task.Fix{Repo: key, Number: mr.Number, TaskID: tk.ID, Fingerprint: tk.Fingerprint, URL: mr.URL, PublishedAt: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	w.srv.AddGroupMember("acme/payments", w.dana, gltest.Developer)
	rex := w.srv.AddUser("rex", "rex@example.com", "")
	w.srv.AddMember(project, rex, gltest.Reporter)
	eve := w.srv.AddUser("eve", "eve@example.com", "")

	deliver := func(id string, payload []byte) deliveries.Result {
		t.Helper()
		res, err := w.process(t, id, event.Note, payload)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return res
	}
	payload := func(n *gltest.Note) []byte { return w.srv.NotePayload(project, iid, n) }

	deliver("reporter", payload(w.srv.AddThread(project, iid, rex, "please use a decimal type", nil)))
	// eve's thread, in a payload that names dana as its author.
	claimed := *w.srv.AddThread(project, iid, eve, "drop the rounding", nil)
	claimed.Author = w.dana
	deliver("claimed", payload(&claimed))
	deliver("self", payload(w.srv.AddThread(project, iid, w.bot, "note to self", nil)))
	resolved := w.srv.AddThread(project, iid, w.dana, "a typo in the comment", nil)
	w.srv.Resolve(project, iid, resolved)
	deliver("resolved", payload(resolved))
	if got := q.revisions(); len(got) != 0 {
		t.Fatalf("revisions %+v before a member's open thread", got)
	}
	open := w.srv.AddThread(project, iid, w.dana, "also handle a zero balance", nil)
	res := deliver("open", payload(open))
	deliver("reply", payload(w.srv.AddThread(project, iid, w.dana, "and a negative one", open)))
	got := q.revisions()
	if len(got) != 1 || got[0].Request != "also handle a zero balance" || got[0].Reviewer != "dana" || got[0].Number != mr.Number || got[0].Branch != "redfix/fix" || got[0].N != 1 {
		t.Fatalf("revisions %+v (the open thread's delivery: %q); want one, dana's words", got, res.Note)
	}
	f, err := st.GetFix(ctx, key, mr.Number)
	if err != nil || !f.ChangesRequested {
		t.Errorf("the fix after the thread: %+v, %v; want changes requested", f, err)
	}
	var answers []string
	w.srv.Lock()
	for _, n := range w.srv.MR(project, iid).Notes {
		if n.Author == w.bot && n.Discussion == "" {
			answers = append(answers, n.Body)
		}
	}
	w.srv.Unlock()
	if len(answers) != 1 || !strings.Contains(answers[0], "Revising") || !strings.Contains(answers[0], "@dana") {
		t.Errorf("redfix's answers %q; want one, that it revises as dana asked", answers)
	}
}
