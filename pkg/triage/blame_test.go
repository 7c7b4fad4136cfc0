package triage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// AddFailures makes memStore a FailureMerger.
func (s *memStore) AddFailures(_ context.Context, id string, failures []task.Failure) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return fmt.Errorf("no task %s", id)
	}
	t.Failures = append(t.Failures, failures...)
	s.tasks[id] = t
	return nil
}

// redisTriage is a triage with two re-runs over a store in a miniredis
// of its own, the server returned to move its clock, and its queue.
func redisTriage(t *testing.T, prefix string) (*miniredis.Miniredis, *store.Store, *memQueue, *Triage) {
	t.Helper()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	st := store.New(rdb, prefix)
	queue := &memQueue{}
	return m, st, queue, New(st, queue, nil, Config{Languages: goOnly, Reruns: 2, WorkDir: t.TempDir()}, nil)
}

const (
	mathGood = "package calc\n\nfunc Add(x, y int) int { return x + y }\n\nfunc Sub(x, y int) int { return x - y }\n"
	mathBad  = "package calc\n\nfunc Add(x, y int) int { return x * y }\n\nfunc Sub(x, y int) int { return x / y }\n"
	mathTest = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}
}

func TestSub(t *testing.T) {
	if got := Sub(5, 2); got != 3 {
		t.Fatalf("Sub(5, 2) returned %d instead of 3", got)
	}
}
`
)

// A commit that breaks several tests becomes one task: the later groups
// are confirmed on the same culprit with a few runs and merged into the
// first group's task.
func TestProcessGroupsByBlameCommit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := bisecttest.NewRepo(t)
	shas := []string{f.Commit("calc", map[string]string{"go.mod": bisecttest.GoMod, "calc/calc.go": mathGood, "calc/calc_test.go": mathTest})}
	for i := 1; i <= 12; i++ {
		files := map[string]string{fmt.Sprintf("notes/%d.txt", i): "note\n"}
		if i == 5 {
			files["calc/calc.go"] = mathBad
		}
		shas = append(shas, f.Commit(fmt.Sprintf("change %d", i), files))
	}
	store, queue := newMemStore(), &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, WorkDir: t.TempDir(), Reruns: 2}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: shas[12], Good: shas[0], Report: report.Result{Failures: []task.Failure{
		{Package: "example.com/calc/calc", Test: "TestAdd", Message: "Add(1, 2) = 2, want 3"},
		{Package: "example.com/calc/calc", Test: "TestSub", Message: "Sub(5, 2) returned 2 instead of 3"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0].Status != task.StatusQueued || outs[1].Status != task.StatusDropped {
		t.Fatalf("outcomes = %+v", outs)
	}
	first := store.tasks[outs[0].TaskID]
	if first.Bisection.Blame != shas[5] {
		t.Errorf("blame %s, want %s", task.Short(first.Bisection.Blame), task.Short(shas[5]))
	}
	want := fmt.Sprintf("same blame commit %s as task %s", task.Short(shas[5]), outs[0].TaskID)
	if !strings.HasPrefix(outs[1].Reason, want) {
		t.Errorf("reason = %q, want it to start %q", outs[1].Reason, want)
	}
	if got := strings.Join(first.Tests(), ","); got != "example.com/calc/calc.TestAdd,example.com/calc/calc.TestSub" {
		t.Errorf("the first task's tests = %s, want both", got)
	}
	if len(queue.jobs) != 1 {
		t.Errorf("%d jobs queued, want 1", len(queue.jobs))
	}
	// Confirming the culprit costs fewer runs than finding it.
	second := store.tasks[outs[1].TaskID]
	if second.Bisection.Blame != shas[5] || second.Bisection.Steps >= first.Bisection.Steps {
		t.Errorf("second group: blame %s in %d runs; the first took %d", task.Short(second.Bisection.Blame), second.Bisection.Steps, first.Bisection.Steps)
	}
}

// A breaking commit's task takes the failures of later reports blamed on the
// same commit for as long as it is active, well past triage's claim life;
// once it ends without a pull request, a new failure of that commit gets a
// task of its own.
func TestBlameCommitMergesWhileItsTaskIsActive(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	m, st, _, tr := redisTriage(t, "blame-merge")
	report := func(msg string) Input {
		fl := addFailure("1")
		fl.Message = msg
		return Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Report: report.Result{Failures: []task.Failure{fl}}}
	}
	outs, err := tr.Process(ctx, report("Add(1, 2) = -1, want 3"))
	if err != nil || len(outs) != 1 || outs[0].Status != task.StatusQueued {
		t.Fatalf("first report: %+v, %v", outs, err)
	}
	first := outs[0].TaskID
	key := BlameGroup(f.Dir, shas[6])
	if owner, ttl, ok, err := st.GroupClaim(ctx, key); err != nil || !ok || owner != first || ttl <= st.ClaimTTLs().Triage {
		t.Fatalf("blame claim: owner %q ttl %s ok %v err %v; want %s's, living past the triage claim", owner, ttl, ok, err, first)
	}

	// Much later than triage's claim life, while the task still waits.
	m.FastForward(2 * st.ClaimTTLs().Triage)
	outs, err = tr.Process(ctx, report("sum went the wrong way"))
	if err != nil || len(outs) != 1 || !strings.HasPrefix(outs[0].Reason, "same blame commit "+task.Short(shas[6])+" as task "+first) {
		t.Fatalf("later report: %+v, %v; want merged into %s", outs, err, first)
	}
	got, err := st.GetTask(ctx, first)
	if err != nil || len(got.Failures) != 1 {
		// The same test: merged by test ID, it is already there.
		t.Fatalf("first task after the merge: %+v, %v", got.Failures, err)
	}

	// A worker takes it and publishes: still the commit's task.
	for _, s := range []task.Status{task.StatusRunning, task.StatusPublished} {
		if err := st.SetStatus(ctx, first, s, ""); err != nil {
			t.Fatal(err)
		}
	}
	m.FastForward(48 * time.Hour)
	if owner, _, ok, _ := st.GroupClaim(ctx, key); !ok || owner != first {
		t.Fatalf("a published task's blame claim: owner %q ok %v", owner, ok)
	}

	// Once a task ends without a pull request, the commit is free again.
	if err := st.SetStatus(ctx, first, task.StatusNoPatch, "no candidate passed the gates"); err != nil {
		t.Fatal(err)
	}
	if owner, _, ok, _ := st.GroupClaim(ctx, key); ok {
		t.Fatalf("the ended task %s still holds its blame commit (owner %s)", first, owner)
	}
	outs, err = tr.Process(ctx, report("Add went negative"))
	if err != nil || len(outs) != 1 || outs[0].Status != task.StatusQueued {
		t.Fatalf("after the first task ended: %+v, %v; want a new task", outs, err)
	}
	if owner, _, ok, _ := st.GroupClaim(ctx, key); !ok || owner != outs[0].TaskID {
		t.Errorf("the new task does not hold the blame commit: owner %q", owner)
	}
}

// A blame commit claimed by a task that ended without being queued (its
// bot died holding the claim, and its report's redelivery was dropped as
// a duplicate of the very task now bisecting) is taken over: deferring to
// it would leave the failure with no task at all.
func TestBlameClaimOfADroppedTaskIsTakenOver(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	_, st, queue, tr := redisTriage(t, "blame-takeover")

	key := BlameGroup(f.Dir, shas[6])
	dead := "20261129T041440Z-b59a6f0821ce"
	if _, created, err := st.ClaimGroup(ctx, key, dead); err != nil || !created {
		t.Fatalf("claim the blame commit for the dead delivery: %v, %v", created, err)
	}
	if err := st.SaveTask(ctx, task.Task{ID: dead, Repo: f.Dir, Commit: shas[10], Status: task.StatusDropped,
		Reason: "duplicate of task 20261129T041444Z-57bcf22e33e0", CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: shas[10], Good: shas[0], Report: report.Result{Failures: []task.Failure{addFailure("1")}}})
	if err != nil || len(outs) != 1 || outs[0].Status != task.StatusQueued {
		t.Fatalf("outcomes %+v, %v; want the group queued, not deferred to the dropped task", outs, err)
	}
	if owner, _, ok, _ := st.GroupClaim(ctx, key); !ok || owner != outs[0].TaskID {
		t.Errorf("the blame commit's owner is %q, want the new task %s", owner, outs[0].TaskID)
	}
	if len(queue.jobs) != 1 {
		t.Errorf("%d jobs queued, want 1", len(queue.jobs))
	}
}
