package triage

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
)

// goOnly chooses the Go driver for the Go histories most tests use.
var goOnly = lang.New(golang.Driver{})

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// flakyRepo is a module whose TestFlaky fails on odd runs, counting runs in
// a file of the test's own temporary directory.
func flakyRepo(t *testing.T) (*bisecttest.Repo, string) {
	return countingRepo(t, "flaky", "Flaky", "n%2 == 1", "odd runs fail")
}

// failsFirstRepo is a one-commit module whose TestFirst fails its first n
// runs and passes after them.
func failsFirstRepo(t *testing.T, n int) (*bisecttest.Repo, string) {
	return countingRepo(t, "first", "First", fmt.Sprintf("n <= %d", n), "the first runs fail")
}

// countingRepo is a one-commit module example.com/<pkg> whose Test<name>
// counts its runs in a file of the test's own temporary directory and
// fails run n (from 1) when fails, a Go condition on n, holds.
func countingRepo(t *testing.T, pkg, name, fails, why string) (*bisecttest.Repo, string) {
	t.Helper()
	counter := filepath.Join(t.TempDir(), "runs")
	f := bisecttest.NewRepo(t)
	sha := f.Commit(pkg, map[string]string{
		"go.mod": "module example.com/" + pkg + "\n\ngo 1.22\n",
		pkg + "_test.go": fmt.Sprintf(`package %s

import (
	"os"
	"strconv"
	"testing"
)

func Test%s(t *testing.T) {
	data, _ := os.ReadFile(%q)
	n, _ := strconv.Atoi(string(data))
	n++
	if err := os.WriteFile(%[3]q, []byte(strconv.Itoa(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	if %s {
		t.Errorf("run %%d: %s", n)
	}
}
`, pkg, name, counter, fails, why),
	})
	return f, sha
}

// memStore is an in-memory Store.
type memStore struct {
	mu       sync.Mutex
	groups   map[string]string // fingerprint → task ID
	tasks    map[string]task.Task
	runs     map[string][2]int // test → runs, failures
	released []string
}

func newMemStore() *memStore {
	return &memStore{groups: map[string]string{}, tasks: map[string]task.Task{}, runs: map[string][2]int{}}
}

func (s *memStore) ClaimGroup(_ context.Context, fp, id string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.groups[fp]; ok {
		return cur, false, nil
	}
	s.groups[fp] = id
	return id, true, nil
}

func (s *memStore) ReleaseGroup(_ context.Context, fp, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[fp] == id {
		delete(s.groups, fp)
		s.released = append(s.released, fp)
	}
	return nil
}

func (s *memStore) RefreshGroup(_ context.Context, fp, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.groups[fp]
	if !ok {
		s.groups[fp] = id
		return true, nil
	}
	return cur == id, nil
}

func (s *memStore) SaveTask(_ context.Context, t task.Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks[t.ID] = t
	return nil
}

func (s *memStore) GetTask(_ context.Context, id string) (task.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return task.Task{}, fmt.Errorf("get task %s: %w", id, task.ErrNotFound)
	}
	return t, nil
}

func (s *memStore) GroupClaim(_ context.Context, fp string) (string, time.Duration, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, ok := s.groups[fp]
	return owner, 0, ok, nil
}

func (s *memStore) TakeOverGroup(_ context.Context, fp, from, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[fp] != from {
		return false, nil
	}
	s.groups[fp] = id
	return true, nil
}

func (s *memStore) RecordRun(_ context.Context, id string, failed bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	r[0]++
	if failed {
		r[1]++
	}
	s.runs[id] = r
	return nil
}

func (s *memStore) TestHistory(_ context.Context, id string) (int, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	return r[0], r[1], nil
}

// memQueue is an in-memory Queue with message-id dedup (fingerprint and
// task ID, as the real queue).
type memQueue struct {
	mu   sync.Mutex
	jobs []job.Job
}

func (q *memQueue) Enqueue(_ context.Context, j job.Job) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, have := range q.jobs {
		if have.ID == j.ID && have.Task.ID == j.Task.ID { // the queue's message ID
			return true, nil
		}
	}
	if err := j.Validate(); err != nil {
		return false, err
	}
	q.jobs = append(q.jobs, j)
	return false, nil
}

// addFailure is TestAdd's failure as CI reported it, with a path and a
// duration of CI's machine in it.
func addFailure(ciRun string) task.Failure {
	out := "=== RUN   TestAdd\n    calc_test.go:7: Add(1, 2) = -1, want 3\n--- FAIL: TestAdd (0.0" + ciRun + "s)\n"
	return task.Failure{Package: "example.com/calc/calc", Test: "TestAdd", Message: "Add(1, 2) = -1, want 3", Output: out, Frames: golang.Frames(out, 5)}
}
