package triage

import (
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

// A breaking commit's task takes the failures of later reports blamed on the
// same commit for as long as it is active, well past triage's claim life;
// once it ends without a pull request, a new failure of that commit gets a
// task of its own.
func TestBlameCommitMergesWhileItsTaskIsActive(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := bisecttest.CalcHistory(t)
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	st := store.New(rdb, "blame-merge")
	queue := &memQueue{}
	tr := New(st, queue, nil, Config{Reruns: 2, WorkDir: t.TempDir()}, nil)
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
