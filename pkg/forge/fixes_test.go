package forge_test

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/task"
)

type memFixes struct {
	tasks []task.Task
	fixes map[string]task.Fix
}

func (m *memFixes) SaveTask(_ context.Context, t task.Task) error {
	m.tasks = append(m.tasks, t)
	return nil
}

func (m *memFixes) RecordPublished(_ context.Context, f task.Fix) (bool, error) {
	if _, ok := m.fixes[f.URL]; ok {
		return false, nil
	}
	f.State = task.FixOpen
	m.fixes[f.URL] = f
	return true, nil
}

func (m *memFixes) GetFix(_ context.Context, repo string, n int) (task.Fix, error) {
	for _, f := range m.fixes {
		if f.Repo == repo && f.Number == n {
			return f, nil
		}
	}
	return task.Fix{}, task.ErrNoFix
}

// TestFixRecorderFollowsChangeRequestsOnForges: a task published as a
// change request on a forge becomes a fix, kept under its repository's
// full path, whose state the dashboard then shows; a local pull request,
// one on no configured forge and a task not published do not.
func TestFixRecorderFollowsChangeRequestsOnForges(t *testing.T) {
	ctx := context.Background()
	m := &memFixes{fixes: map[string]task.Fix{}}
	forges := forge.New(driver{name: "a", host: "a.example"})
	r := forge.FixRecorder{Forges: forges, Tasks: m, Fixes: m, Log: zap.NewNop()}
	const url = "https://a.example/group/sub/shop/-/change/7"
	for _, tk := range []task.Task{
		{ID: "t1", Status: task.StatusRunning},
		{ID: "t2", Status: task.StatusPublished, PullRequest: "file:///tmp/out/redfix-t2"},
		{ID: "t3", Status: task.StatusPublished, PullRequest: url, Fingerprint: "fp"},
		{ID: "t4", Status: task.StatusPublished, PullRequest: "https://b.example/group/sub/shop/-/change/7"},
	} {
		if err := r.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.tasks) != 4 {
		t.Errorf("%d tasks saved, want 4", len(m.tasks))
	}
	if len(m.fixes) != 1 {
		t.Fatalf("fixes %+v, want the forge's change request alone", m.fixes)
	}
	if f := m.fixes[url]; f.Repo != "group/sub/shop" || f.Number != 7 || f.TaskID != "t3" || f.Fingerprint != "fp" {
		t.Errorf("fix %+v", f)
	}
	state := forge.ChangeState(forges, m)
	if st, ok := state(ctx, url); !ok || st != string(task.FixOpen) {
		t.Errorf("state of the change request: %q, %v", st, ok)
	}
	if _, ok := state(ctx, "file:///tmp/out/redfix-t2"); ok {
		t.Error("a local pull request has a state")
	}
}
