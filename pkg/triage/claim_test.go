package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// A report of a failure whose group belongs to a task that ended without a
// pull request is never called its duplicate. After an infrastructure
// failure (failed) or a refused budget (over_budget) a new task takes the
// group at once; after a verdict on the failure (no_patch, dropped) the
// report is dropped as the same failure as that task, which ended without
// a fix, until the verdict expires (triage.verdict_ttl); a task in hand
// (queued, running, published) still has duplicates.
func TestGroupOfTaskThatEndedWithoutPullRequest(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	m, st, queue, tr := redisTriage(t, "ended-owner")
	in := Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Report: report.Result{Failures: []task.Failure{addFailure("1")}}}
	process := func(what string) Outcome {
		t.Helper()
		outs, err := tr.Process(ctx, in)
		if err != nil || len(outs) != 1 {
			t.Fatalf("%s: %+v, %v", what, outs, err)
		}
		return outs[0]
	}
	owner := func(fp string) string {
		t.Helper()
		o, _, ok, err := st.GroupClaim(ctx, fp)
		if err != nil || !ok {
			t.Fatalf("group claim: %q %v %v", o, ok, err)
		}
		return o
	}
	setStatus := func(id string, s task.Status, reason string) {
		t.Helper()
		if err := st.SetStatus(ctx, id, s, reason); err != nil {
			t.Fatal(err)
		}
	}

	first := process("first report")
	if first.Status != task.StatusQueued {
		t.Fatalf("first report: %+v, want queued", first)
	}
	// In hand: queued, then running.
	if o := process("while queued"); o.Reason != "duplicate of task "+first.TaskID {
		t.Fatalf("while the task is queued: %q, want a duplicate of it", o.Reason)
	}
	setStatus(first.TaskID, task.StatusRunning, "attempt 1")
	if o := process("while running"); o.Reason != "duplicate of task "+first.TaskID || ReasonClass(o.Reason) != ReasonDuplicate {
		t.Fatalf("while the task runs: %q, want a duplicate of it", o.Reason)
	}

	// Ended with no patch: a verdict on the failure, held for its time,
	// and said as it is.
	setStatus(first.TaskID, task.StatusNoPatch, "no candidate passed the oracle gate")
	o := process("after no_patch")
	wantPrefix := "same failure as task " + first.TaskID + ", which ended without a fix (no_patch: no candidate passed the oracle gate); triaged again in "
	if o.Status != task.StatusDropped || !strings.HasPrefix(o.Reason, wantPrefix) || ReasonClass(o.Reason) != ReasonEndedUnfixed || o.TestRuns != 0 {
		t.Fatalf("after no_patch: %+v\nwant a drop starting %q", o, wantPrefix)
	}
	if strings.Contains(o.Reason, "duplicate") {
		t.Fatalf("called a duplicate: %q", o.Reason)
	}
	if got := owner(first.Fingerprint); got != first.TaskID {
		t.Fatalf("the verdict's group owner is %s, want %s", got, first.TaskID)
	}
	// Once the verdict expires, the failure gets a new task.
	m.FastForward(st.ClaimTTLs().Verdict + 1)
	second := process("after the verdict expired")
	if second.Status != task.StatusQueued || second.TaskID == first.TaskID {
		t.Fatalf("after the verdict expired: %+v, want a new task queued", second)
	}

	// Ended by an infrastructure failure: no verdict on the failure; the
	// next report makes a new task at once.
	setStatus(second.TaskID, task.StatusFailed, "gave up after 5 attempts: model API: 503")
	third := process("after failed")
	if third.Status != task.StatusQueued || third.TaskID == second.TaskID {
		t.Fatalf("after the task failed: %+v, want a new task queued", third)
	}
	if got := owner(third.Fingerprint); got != third.TaskID {
		t.Fatalf("group owner %s after the take-over, want %s", got, third.TaskID)
	}
	if n := len(queue.jobs); n != 3 {
		t.Fatalf("%d jobs queued, want one per task made (3)", n)
	}

	// Published: the failure is in hand; later reports are duplicates.
	setStatus(third.TaskID, task.StatusPublished, "")
	if o := process("after published"); o.Reason != "duplicate of task "+third.TaskID {
		t.Fatalf("after the pull request: %q, want a duplicate of %s", o.Reason, third.TaskID)
	}
}

// stolenStore hands the group to another task right after this triage
// claims it: its claim lapsed and another report's triage took it.
type stolenStore struct{ *memStore }

func (s stolenStore) ClaimGroup(ctx context.Context, fp, id string) (string, bool, error) {
	owner, created, err := s.memStore.ClaimGroup(ctx, fp, id)
	s.mu.Lock()
	s.groups[fp] = "task-other"
	s.mu.Unlock()
	return owner, created, err
}

func TestProcessStopsWhenAnotherTaskTakesTheGroup(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	mem, queue := newMemStore(), &memQueue{}
	tr := New(stolenStore{mem}, queue, nil, Config{Languages: goOnly, Reruns: 3, WorkDir: t.TempDir(), ClaimRefresh: 10 * time.Millisecond}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Report: report.Result{Failures: []task.Failure{addFailure("1")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || !strings.Contains(outs[0].Reason, "took the group while this triage ran") {
		t.Fatalf("outcomes %+v, want a drop: another task took the group", outs)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("queued %d jobs for a group another task holds", len(queue.jobs))
	}
	if owner := mem.groups[outs[0].Fingerprint]; owner != "task-other" {
		t.Errorf("claim %q, want it left with task-other", owner)
	}
}
