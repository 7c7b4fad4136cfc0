package triage

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

func TestScoreAndAdaptiveReruns(t *testing.T) {
	t.Parallel()
	none := Score(nil)
	if none != (FlakeScore{}) || AdaptiveReruns(5, none) != 5 {
		t.Errorf("no history: %+v, %d reruns", none, AdaptiveReruns(5, none))
	}
	steady := Score(map[string]task.CommitRuns{"a": {Passed: 10}, "b": {Passed: 8}, "c": {Failed: 6}, "d": {Missing: 3}})
	if steady.Flaky() || steady.Commits != 3 || steady.Runs != 24 || steady.Rate != 0 {
		t.Errorf("steady = %+v", steady)
	}
	// Never flaky over many runs: a failure shows at once.
	if n := AdaptiveReruns(5, steady); n != 2 {
		t.Errorf("steady: %d reruns, want 2", n)
	}
	flaky := Score(map[string]task.CommitRuns{"a": {Passed: 6, Failed: 4}, "b": {Passed: 10}, "c": {Failed: 5}})
	// 4 failures in the 20 runs at commits where it passed.
	if !flaky.Flaky() || flaky.FlakyCommits != 1 || flaky.Rate != 0.2 {
		t.Errorf("flaky = %+v", flaky)
	}
	// A flaky failure passes at least once in 3 runs 99% of the time at a
	// 20% failure rate; never fewer than the base.
	if n := AdaptiveReruns(2, flaky); n != 3 {
		t.Errorf("flaky at 20%%, base 2: %d reruns, want 3", n)
	}
	if n := AdaptiveReruns(5, flaky); n != 5 {
		t.Errorf("flaky at 20%%, base 5: %d reruns, want 5", n)
	}
	// A test that fails most runs needs many, bounded by four times base.
	often := Score(map[string]task.CommitRuns{"a": {Passed: 1, Failed: 9}})
	if n := AdaptiveReruns(3, often); n != 12 {
		t.Errorf("flaky at 90%%, base 3: %d reruns, want 12", n)
	}
}

// historyStore is memStore with a history by commit and a quarantine.
type historyStore struct {
	*memStore
	*bisecttest.RunCache
	mu         sync.Mutex
	quarantine []task.QuarantineEntry
}

func (s *historyStore) Quarantine(_ context.Context, e task.QuarantineEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quarantine = append(s.quarantine, e)
	return nil
}

// A flaky failure is recorded with its evidence for the quarantine report;
// the next failure of the test is re-run as often as its history needs.
func TestProcessQuarantinesFlakyAndAdaptsReruns(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, sha := flakyRepo(t)
	store := &historyStore{memStore: newMemStore(), RunCache: bisecttest.NewRunCache()}
	queue := &memQueue{}
	tr := New(store, queue, nil, Config{Languages: goOnly, WorkDir: t.TempDir(), Reruns: 2}, nil)
	outs, err := tr.Process(ctx, Input{Repo: f.Dir, Commit: sha, Report: report.Result{Failures: []task.Failure{
		{Package: "example.com/flaky", Test: "TestFlaky", Message: "run 7: odd runs fail"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// Runs 1 and 2: one failed, one passed, at the same commit.
	if len(outs) != 1 || outs[0].Status != task.StatusDropped || !strings.HasPrefix(outs[0].Reason, "flaky: 1/2 runs failed") {
		t.Fatalf("outcomes = %+v", outs)
	}
	const id = "example.com/flaky.TestFlaky"
	if got := store.RunCache.At(id, sha); got != (task.CommitRuns{Passed: 1, Failed: 1}) {
		t.Errorf("history at %s = %+v, want 1 passed 1 failed", task.Short(sha), got)
	}
	if len(store.quarantine) != 1 {
		t.Fatalf("quarantine = %+v", store.quarantine)
	}
	q := store.quarantine[0]
	if q.Test != id || q.Commit != sha || q.Runs != 2 || q.Failures != 1 || q.Message != "run 1: odd runs fail" || q.Reason != outs[0].Reason || q.TaskID != outs[0].TaskID {
		t.Errorf("quarantine entry = %+v", q)
	}

	// Another failure of the test (another fingerprint): its history is
	// flaky at 50%, so ceil(log 0.01 / log 0.5) = 7 runs, not 2.
	outs, err = tr.Process(ctx, Input{Repo: f.Dir, Commit: sha, Report: report.Result{Failures: []task.Failure{
		{Package: "example.com/flaky", Test: "TestFlaky", Message: "another assertion"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].TestRuns != 7 || !strings.Contains(outs[0].Reason, "flaky at 1 of 1 commits, flake rate 50%") {
		t.Errorf("second outcome = %+v", outs)
	}
	if len(queue.jobs) != 0 {
		t.Errorf("a flaky failure was queued")
	}
}
