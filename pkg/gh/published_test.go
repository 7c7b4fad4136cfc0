package gh_test

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/task"
)

func TestPullRequestRef(t *testing.T) {
	for _, c := range []struct {
		url  string
		repo string
		n    int
		ok   bool
	}{
		{"https://github.com/acme/shop/pull/12", "acme/shop", 12, true},
		{"https://ghe.example.com/acme/shop/pull/3/", "acme/shop", 3, true},
		{"file:///tmp/out/redfix-t1", "", 0, false},
		{"https://github.com/acme/shop/issues/12", "", 0, false},
		{"https://github.com/acme/shop/pull/0", "", 0, false},
		{"https://github.com/shop/pull/1", "", 0, false},
	} {
		repo, n, ok := gh.PullRequestRef(c.url)
		if repo != c.repo || n != c.n || ok != c.ok {
			t.Errorf("PullRequestRef(%q) = %q, %d, %v; want %q, %d, %v", c.url, repo, n, ok, c.repo, c.n, c.ok)
		}
	}
}

type memFixes struct {
	tasks []task.Task
	fixes map[string]task.Fix
}

func (m *memFixes) SaveTask(_ context.Context, t task.Task) error {
	m.tasks = append(m.tasks, t)
	return nil
}

func (m *memFixes) RecordPublished(_ context.Context, f task.Fix) (bool, error) {
	key := f.URL
	if _, ok := m.fixes[key]; ok {
		return false, nil
	}
	f.State = task.FixOpen
	m.fixes[key] = f
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

// A task published on GitHub becomes a fix whose state the dashboard then
// shows; a local pull request and a task not published do not.
func TestFixRecorderFollowsGitHubPullRequests(t *testing.T) {
	ctx := context.Background()
	m := &memFixes{fixes: map[string]task.Fix{}}
	r := gh.FixRecorder{Tasks: m, Fixes: m, Log: zap.NewNop()}
	for _, tk := range []task.Task{
		{ID: "t1", Status: task.StatusRunning},
		{ID: "t2", Status: task.StatusPublished, PullRequest: "file:///tmp/out/redfix-t2"},
		{ID: "t3", Status: task.StatusPublished, PullRequest: "https://github.com/acme/shop/pull/7", Fingerprint: "fp"},
	} {
		if err := r.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.tasks) != 3 {
		t.Errorf("%d tasks saved, want 3", len(m.tasks))
	}
	if len(m.fixes) != 1 {
		t.Fatalf("fixes %+v, want the GitHub pull request's alone", m.fixes)
	}
	f := m.fixes["https://github.com/acme/shop/pull/7"]
	if f.Repo != "acme/shop" || f.Number != 7 || f.TaskID != "t3" || f.Fingerprint != "fp" {
		t.Errorf("fix %+v", f)
	}
	state := gh.PullRequestState(m)
	if st, ok := state(ctx, "https://github.com/acme/shop/pull/7"); !ok || st != string(task.FixOpen) {
		t.Errorf("state of the GitHub pull request: %q, %v", st, ok)
	}
	if _, ok := state(ctx, "file:///tmp/out/redfix-t2"); ok {
		t.Error("a local pull request has a state")
	}
}
