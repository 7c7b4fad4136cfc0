package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/task"
)

// countedPulls is a repository with n of redfix's pull requests open.
type countedPulls int

func (n countedPulls) OpenPullRequests(context.Context, string) (int, error) { return int(n), nil }

// budgetStore is memStore with a daily job count per repository.
type budgetStore struct {
	*memStore
	used map[string]int
}

func (s budgetStore) TakeDailyJob(_ context.Context, repo string, _ time.Time, limit int) (bool, int, error) {
	if s.used[repo] >= limit {
		return false, s.used[repo], nil
	}
	s.used[repo]++
	return true, s.used[repo], nil
}

func (s budgetStore) ReturnDailyJob(_ context.Context, repo string, _ time.Time) error {
	s.used[repo]--
	return nil
}

func (s budgetStore) DailyJobs(_ context.Context, repo string, _ time.Time) (int, error) {
	return s.used[repo], nil
}

// TestAdmitRetry: a retry asked for in a pull request's thread meets the
// rules a fresh failure meets in triage, each refusal saying which.
func TestAdmitRetry(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	plain := f.Commit("no file", map[string]string{"a.txt": "a\n"})
	off := f.Commit("opt out", map[string]string{repoconfig.FileName: "version: 1\nenabled: false\n"})
	limited := f.Commit("limits", map[string]string{repoconfig.FileName: "version: 1\nlimits:\n  open_pull_requests: 2\n  repairs_per_day: 1\n"})
	noForks := f.Commit("no forks", map[string]string{repoconfig.FileName: "version: 1\nforks: false\n"})
	loader := &repoconfig.Loader{Central: func(string) repoconfig.Central {
		return repoconfig.Central{Enabled: true, Forks: true, RepairsPerDay: 5}
	}}
	tk := func(commit string) task.Task { return task.Task{ID: "t1", Repo: f.Dir, Commit: commit} }
	fork := func(t task.Task, policyAt string) task.Task {
		t.Fork, t.PolicyCommit = "mallory/repo", policyAt
		return t
	}

	for _, c := range []struct {
		name   string
		cfg    Config
		tk     task.Task
		used   int // jobs of the day already counted
		refuse string
	}{
		{name: "admitted", cfg: Config{DailyJobs: 5, RepoPolicies: loader, OpenPulls: countedPulls(1), Forks: forksOn("github.forks")}, tk: tk(limited)},
		{name: "central opt-out", cfg: Config{OptOut: []string{f.Dir}}, tk: tk(plain), refuse: "the repository opted out of redfix (triage.opt_out)"},
		{name: "the file opts out", cfg: Config{RepoPolicies: loader}, tk: tk(off), refuse: "repository opted out in its .redfix.yaml at " + off + " (enabled: false)"},
		{name: "open pull requests", cfg: Config{RepoPolicies: loader, OpenPulls: countedPulls(2)}, tk: tk(limited), refuse: "2 of the repository's limit of 2 open pull requests by redfix are open"},
		{name: "the file's daily limit", cfg: Config{RepoPolicies: loader}, tk: tk(limited), used: 1, refuse: "daily job budget of " + f.Dir + " used up: 1 jobs queued"},
		{name: "the central daily limit", cfg: Config{DailyJobs: 3}, tk: tk(plain), used: 3, refuse: "daily job budget of " + f.Dir + " used up: 3 jobs queued"},
		{name: "a fork, central off", cfg: Config{}, tk: fork(tk(plain), plain), refuse: "pull request from a fork (mallory/repo): not handled: the central configuration"},
		{name: "a fork, off on its forge", cfg: Config{Forks: forksOnFor{"elsewhere", "gitlab.forks"}}, tk: fork(tk(plain), plain), refuse: "pull request from a fork (mallory/repo): not handled: the central configuration does not handle forks (gitlab.forks)"},
		{name: "a fork, the default branch's file", cfg: Config{Forks: forksOn("github.forks"), RepoPolicies: loader}, tk: fork(tk(plain), noForks), refuse: "pull request from a fork (mallory/repo): not handled: refused by its .redfix.yaml at " + noForks},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := budgetStore{newMemStore(), map[string]int{normalizeRepo(f.Dir): c.used}}
			tr := New(st, &memQueue{}, nil, c.cfg, nil)
			refused, giveBack, err := tr.AdmitRetry(ctx, c.tk)
			if err != nil {
				t.Fatal(err)
			}
			if c.refuse == "" {
				if refused != "" || st.used[normalizeRepo(f.Dir)] != c.used+1 {
					t.Fatalf("refused %q, %d jobs counted; want admitted with one job counted", refused, st.used[normalizeRepo(f.Dir)])
				}
				giveBack()
				if st.used[normalizeRepo(f.Dir)] != c.used {
					t.Errorf("the job was not given back")
				}
				return
			}
			if !strings.HasPrefix(refused, c.refuse) {
				t.Errorf("refused %q, want %q", refused, c.refuse)
			}
			if st.used[normalizeRepo(f.Dir)] > c.used {
				t.Errorf("a refused retry counted a job of the day")
			}
		})
	}
}
