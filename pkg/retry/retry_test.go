package retry_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/retry"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// realRedis is the redis-server at REDFIX_TEST_REDIS_ADDR (CI's), or the
// embedded Redis-protocol server without one.
func realRedis(t *testing.T) *redis.Client {
	t.Helper()
	addr := os.Getenv("REDFIX_TEST_REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("REDFIX_TEST_REDIS_ADDR is not set and CI is")
		}
		return embeddedtest.Redis(t)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// A failure group held by a verdict (a dropped task: triage.verdict_ttl)
// is retried at once: a new task takes the group, queued with a job of its
// own on the real queue; the old task is no longer the group's, and
// retrying it again says which is. A repair under way, a published task, a
// task that is not stored, are not retried.
func TestGroupRetriesAVerdictAndRefusesWhatIsInHand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := store.New(realRedis(t), "retry-test-"+time.Now().Format("150405.000000000"))
	q, err := queue.Open(ctx, embeddedtest.JetStream(t), queue.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := retry.Retrier{State: st, Jobs: q}

	dropped := task.Task{ID: "20261207T100000Z-aaaa", Fingerprint: "fp-setup", Repo: "https://git.example/acme/shop.git", Commit: "abc123",
		Status: task.StatusDropped, Reason: "cannot run its tests: the node setup failed: npm ci: …",
		Failures: []task.Failure{{Package: "src/price.test.ts", Test: "total"}}}
	if _, _, err := st.ClaimGroup(ctx, dropped.Fingerprint, dropped.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveTask(ctx, dropped); err != nil {
		t.Fatal(err)
	}
	nt, err := r.Group(ctx, dropped.ID, "an operator")
	if err != nil {
		t.Fatalf("retry of a dropped task: %v", err)
	}
	if nt.ID != dropped.ID+"-retry-1" || nt.Status != task.StatusQueued || !strings.Contains(nt.Reason, "asked for by an operator") || len(nt.Failures) != 1 {
		t.Fatalf("new task %+v", nt)
	}
	if owner, _, ok, err := st.GroupClaim(ctx, dropped.Fingerprint); err != nil || !ok || owner != nt.ID {
		t.Fatalf("the group's claim: %q %v %v, want the new task's", owner, ok, err)
	}
	if saved, err := st.GetTask(ctx, nt.ID); err != nil || saved.Status != task.StatusQueued {
		t.Fatalf("the new task as stored: %+v %v", saved, err)
	}
	next, cancelNext := context.WithTimeout(ctx, 20*time.Second)
	d, err := q.Next(next)
	cancelNext()
	if err != nil {
		t.Fatalf("no job queued: %v", err)
	}
	if d.Job.ID != job.RetryID(dropped.Fingerprint, 1) || d.Job.Task.ID != nt.ID {
		t.Fatalf("job %s of task %s, want %s of %s", d.Job.ID, d.Job.Task.ID, job.RetryID(dropped.Fingerprint, 1), nt.ID)
	}
	_ = d.Ack(ctx)

	// The old task is no longer the group's: its retry names the one that is.
	if _, err := r.Group(ctx, dropped.ID, "an operator"); !errors.Is(err, retry.ErrRefused) || !strings.Contains(err.Error(), nt.ID) {
		t.Errorf("retry of the old task again: %v, want refused naming %s", err, nt.ID)
	}
	// The new one is queued: its repair is under way.
	if _, err := r.Group(ctx, nt.ID, "an operator"); !errors.Is(err, retry.ErrRefused) || !strings.Contains(err.Error(), "under way") {
		t.Errorf("retry of a queued task: %v, want refused", err)
	}
	// Ended without a pull request and its verdict expired (no claim): the
	// claim is taken afresh, and the ID does not grow.
	nt.Status, nt.Reason = task.StatusNoPatch, "no candidate passed the gates"
	if err := st.SaveTask(ctx, nt); err != nil {
		t.Fatal(err)
	}
	if err := st.ReleaseGroup(ctx, nt.Fingerprint, nt.ID); err != nil {
		t.Fatal(err)
	}
	again, err := r.Group(ctx, nt.ID, "an operator")
	if err != nil || again.ID != dropped.ID+"-retry-2" {
		t.Fatalf("retry after the verdict expired: %+v %v", again, err)
	}
	// Published: one pull request per group.
	pub := task.Task{ID: "t-pub", Fingerprint: "fp-pub", Status: task.StatusPublished, PullRequest: "https://git.example/acme/shop/pull/3"}
	if err := st.SaveTask(ctx, pub); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Group(ctx, pub.ID, "an operator"); !errors.Is(err, retry.ErrRefused) || !strings.Contains(err.Error(), pub.PullRequest) {
		t.Errorf("retry of a published task: %v, want refused naming its pull request", err)
	}
	if _, err := r.Group(ctx, "no-such-task", "an operator"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("retry of an unknown task: %v, want task.ErrNotFound", err)
	}
}
