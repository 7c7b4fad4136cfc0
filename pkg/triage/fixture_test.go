package triage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// fixture is a git repository made by a test.
type fixture struct {
	t    *testing.T
	dir  string
	repo gitrepo.Repo
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, repo: repo}
}

// commit writes files ("" deletes one) and commits them.
func (f *fixture) commit(msg string, files map[string]string) string {
	f.t.Helper()
	for name, body := range files {
		p := filepath.Join(f.dir, name)
		if body == "" {
			if err := os.Remove(p); err != nil {
				f.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	sha, err := f.repo.CommitAll(context.Background(), msg)
	if err != nil {
		f.t.Fatal(err)
	}
	return sha
}

const (
	goMod    = "module example.com/calc\n\ngo 1.22\n"
	addGood  = "package calc\n\n// Add adds.\nfunc Add(x, y int) int { return x + y }\n"
	addBad   = "package calc\n\n// Add adds.\nfunc Add(x, y int) int { return x - y }\n"
	calcTest = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}
}

func TestOK(t *testing.T) {}
`
	addTestID = "example.com/calc/calc.TestAdd"
)

// calcHistory is a module whose TestAdd breaks in commit 6 of 10:
// shas[0] is the root (good), shas[6] breaks Add, shas[10] is HEAD.
func calcHistory(t *testing.T) (*fixture, []string) {
	t.Helper()
	f := newFixture(t)
	shas := []string{f.commit("calc: add Add", map[string]string{"go.mod": goMod, "calc/calc.go": addGood, "calc/calc_test.go": calcTest})}
	for i := 1; i <= 10; i++ {
		if i == 6 {
			shas = append(shas, f.commit("calc: rewrite Add", map[string]string{"calc/calc.go": addBad}))
			continue
		}
		shas = append(shas, f.commit(fmt.Sprintf("docs: note %d", i), map[string]string{fmt.Sprintf("notes/%d.txt", i): fmt.Sprintf("note %d\n", i)}))
	}
	return f, shas
}

// flakyRepo is a module whose TestFlaky fails on odd runs, counting runs in
// a file of the test's own temporary directory.
func flakyRepo(t *testing.T) (*fixture, string) {
	t.Helper()
	counter := filepath.Join(t.TempDir(), "runs")
	f := newFixture(t)
	sha := f.commit("flaky", map[string]string{
		"go.mod": "module example.com/flaky\n\ngo 1.22\n",
		"flaky_test.go": fmt.Sprintf(`package flaky

import (
	"os"
	"strconv"
	"testing"
)

func TestFlaky(t *testing.T) {
	data, _ := os.ReadFile(%q)
	n, _ := strconv.Atoi(string(data))
	n++
	if err := os.WriteFile(%[1]q, []byte(strconv.Itoa(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	if n%%2 == 1 {
		t.Errorf("run %%d: odd runs fail", n)
	}
}
`, counter),
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
		return task.Task{}, fmt.Errorf("get task %s: %w", id, store.ErrNotFound)
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
