package triage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// fixedHead is a default branch whose head is known in advance.
type fixedHead struct {
	commit string
	err    error
}

func (h fixedHead) DefaultHead(context.Context, string) (string, string, error) {
	return "main", h.commit, h.err
}

// forksOnFor is a central opt-in to forks that handles those of one
// repository, named by setting.
type forksOnFor struct{ repo, setting string }

func (f forksOnFor) ForksHandled(repo string) (bool, string) { return repo == f.repo, f.setting }

// forksOn handles the forks of every repository, as setting.
type forksOn string

func (f forksOn) ForksHandled(string) (bool, string) { return true, string(f) }

// trustRunner runs tests as go test does, and counts the runs that came
// as a fork's (sandbox.Untrusted) and those that came as the
// repository's own.
type trustRunner struct {
	mu                 sync.Mutex
	untrusted, trusted int
}

func (r *trustRunner) Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	r.mu.Lock()
	if sandbox.Untrusted(ctx) {
		r.untrusted++
	} else {
		r.trusted++
	}
	r.mu.Unlock()
	return golang.Runner{}.Run(ctx, dir, ids, count)
}

// TestProcessForks: a report of a pull request from a fork is triaged
// only where the central configuration handles forks and the repository's
// .redfix.yaml on its default branch does not say forks: false. The fork's
// own commit has no such line: a policy read there would let it through.
// A fork's report that is triaged runs its tests as an untrusted source
// (caches of its own); the repository's own, as trusted.
func TestProcessForks(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	forkCommit := f.Commit("passing test", map[string]string{
		"go.mod":         "module example.com/forked\n\ngo 1.22\n",
		"forked_test.go": "package forked\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n",
	})
	noForks := f.Commit("no forks", map[string]string{repoconfig.FileName: "version: 1\nforks: false\n"})
	loader := &repoconfig.Loader{Central: func(string) repoconfig.Central { return repoconfig.Central{Enabled: true, Forks: true} }}
	failures := []task.Failure{{Package: "example.com/forked", Test: "TestOK", Message: "it failed on CI"}}

	for _, c := range []struct {
		name     string
		fork     string
		forks    ForkOptIn
		policies RepoPolicies
		head     fixedHead
		want     string // the reason's start, or "" for a report triaged on
		rule     string // the fork rule's verdict ("" for none)
	}{
		{name: "own commit, forks off", forks: nil, policies: loader, head: fixedHead{commit: noForks}},
		{name: "fork, central off", fork: "mallory/forked", forks: forksOnFor{"elsewhere", "github.forks"}, policies: loader, head: fixedHead{commit: forkCommit},
			want: "pull request from a fork (mallory/forked): not handled: the central configuration does not handle forks (github.forks)", rule: task.RuleDrop},
		{name: "fork, central off on its forge", fork: "mallory/forked", forks: forksOnFor{"elsewhere", "gitlab.forks"}, policies: loader, head: fixedHead{commit: forkCommit},
			want: "pull request from a fork (mallory/forked): not handled: the central configuration does not handle forks (gitlab.forks)", rule: task.RuleDrop},
		{name: "fork, no opt-in", fork: "mallory/forked", policies: loader, head: fixedHead{commit: forkCommit},
			want: "pull request from a fork (mallory/forked): not handled: the central configuration does not handle forks", rule: task.RuleDrop},
		{name: "fork, the default branch's file says no", fork: "mallory/forked", forks: forksOn("github.forks"), policies: loader, head: fixedHead{commit: noForks},
			want: "pull request from a fork (mallory/forked): not handled: refused by its .redfix.yaml at " + noForks + " (forks: false)", rule: task.RuleDrop},
		{name: "fork, default branch unknown", fork: "mallory/forked", forks: forksOn("github.forks"), policies: loader, head: fixedHead{err: errors.New("ls-remote: no answer")},
			want: "pull request from a fork (mallory/forked): not handled: its repository's .redfix.yaml could not be read on the default branch", rule: task.RuleDrop},
		{name: "fork, handled", fork: "mallory/forked", forks: forksOn("github.forks"), policies: loader, head: fixedHead{commit: forkCommit}, rule: task.RulePass},
		{name: "fork, handled on its forge", fork: "mallory/forked", forks: forksOnFor{f.Dir, "gitlab.forks"}, policies: loader, head: fixedHead{commit: forkCommit}, rule: task.RulePass},
		{name: "fork, handled without policies", fork: "mallory/forked", forks: forksOn("github.forks"), head: fixedHead{commit: noForks}, rule: task.RulePass},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, q := newMemStore(), &memQueue{}
			runner := &trustRunner{}
			tr := New(store, q, runner, Config{Languages: goOnly, Reruns: 1, WorkDir: t.TempDir(), Heads: c.head, Forks: c.forks, RepoPolicies: c.policies}, nil)
			outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: forkCommit, Fork: c.fork, Report: report.Result{Failures: failures}})
			if err != nil || len(outs) != 1 {
				t.Fatalf("Process: %v, %d outcomes", err, len(outs))
			}
			o := outs[0]
			saved := store.tasks[o.TaskID]
			var rule *task.RuleCheck
			for i, r := range saved.Rules {
				if r.Rule == RuleFork {
					rule = &saved.Rules[i]
				}
			}
			switch {
			case c.rule == "" && rule != nil, c.rule != "" && (rule == nil || rule.Verdict != c.rule):
				t.Errorf("the fork rule: %+v, want verdict %q", rule, c.rule)
			case saved.Fork != c.fork:
				t.Errorf("task's fork %q, want %q", saved.Fork, c.fork)
			}
			if c.want != "" {
				if o.Status != task.StatusDropped || !strings.HasPrefix(o.Reason, c.want) || ReasonClass(o.Reason) != ReasonFork || o.TestRuns != 0 {
					t.Errorf("outcome %s %q (%d test runs); want dropped before any run with %q", o.Status, o.Reason, o.TestRuns, c.want)
				}
				if len(store.groups) != 0 || len(q.jobs) != 0 {
					t.Errorf("a refused fork claimed %v, queued %d jobs", store.groups, len(q.jobs))
				}
				return
			}
			// Triaged on: the test passes here, so it does not reproduce.
			if ReasonClass(o.Reason) != ReasonNotReproduced {
				t.Errorf("outcome %s %q; want it triaged on to not_reproduced", o.Status, o.Reason)
			}
			if fork := c.fork != ""; runner.untrusted+runner.trusted == 0 || fork && runner.trusted != 0 || !fork && runner.untrusted != 0 {
				t.Errorf("runs as a fork's: %d, as the repository's: %d; want every run as the %s", runner.untrusted, runner.trusted, map[bool]string{true: "fork's", false: "repository's"}[fork])
			}
			if c.fork != "" && c.policies != nil && saved.PolicyCommit != c.head.commit {
				t.Errorf("policy read at %q, want the default branch's head %s", saved.PolicyCommit, c.head.commit)
			}
		})
	}
}

// TestForkHeadline: the verdict on the red commit says why a fork's run
// was not repaired.
func TestForkHeadline(t *testing.T) {
	t.Parallel()
	tk := task.Task{Status: task.StatusDropped, Reason: forkReason("mallory/forked", "refused by its .redfix.yaml at abc1234 (forks: false)")}
	if h := headline(tk, nil); h != "not repaired: pull requests from forks are not handled" {
		t.Errorf("headline %q", h)
	}
}
