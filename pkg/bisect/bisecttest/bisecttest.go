// Package bisecttest holds what the tests of bisection and of triage share:
// git repositories made by the test, with histories where a test or a
// package's build breaks at a known commit, and an in-memory RunCache.
package bisecttest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// Repo is a git repository made by a test.
type Repo struct {
	t    testing.TB
	Dir  string
	Repo gitrepo.Repo
}

// NewRepo makes an empty repository in the test's temporary directory.
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{t: t, Dir: dir, Repo: repo}
}

// Commit writes files ("" deletes one) and commits them.
func (r *Repo) Commit(msg string, files map[string]string) string {
	r.t.Helper()
	for name, body := range files {
		p := filepath.Join(r.Dir, name)
		if body == "" {
			if err := os.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	sha, err := r.Repo.CommitAll(context.Background(), msg)
	if err != nil {
		r.t.Fatal(err)
	}
	return sha
}

// The calc module: Add, right (AddGood) or wrong (AddBad), and its tests.
const (
	GoMod    = "module example.com/calc\n\ngo 1.22\n"
	AddGood  = "package calc\n\n// Add adds.\nfunc Add(x, y int) int { return x + y }\n"
	AddBad   = "package calc\n\n// Add adds.\nfunc Add(x, y int) int { return x - y }\n"
	CalcTest = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}
}

func TestOK(t *testing.T) {}
`
	AddTestID = "example.com/calc/calc.TestAdd"
)

// CalcHistory is a module whose TestAdd breaks in commit 6 of 10:
// shas[0] is the root (good), shas[6] breaks Add, shas[10] is HEAD.
func CalcHistory(t testing.TB) (*Repo, []string) {
	t.Helper()
	r := NewRepo(t)
	shas := []string{r.Commit("calc: add Add", map[string]string{"go.mod": GoMod, "calc/calc.go": AddGood, "calc/calc_test.go": CalcTest})}
	for i := 1; i <= 10; i++ {
		if i == 6 {
			shas = append(shas, r.Commit("calc: rewrite Add", map[string]string{"calc/calc.go": AddBad}))
			continue
		}
		shas = append(shas, r.Commit(fmt.Sprintf("docs: note %d", i), map[string]string{fmt.Sprintf("notes/%d.txt", i): fmt.Sprintf("note %d\n", i)}))
	}
	return r, shas
}

// BrokenBuildHistory is calc's module where commit 5 of 8 makes Add call a
// function that does not exist: shas[0] is the root, shas[8] is HEAD.
func BrokenBuildHistory(t testing.TB) (*Repo, []string) {
	t.Helper()
	r := NewRepo(t)
	shas := []string{r.Commit("calc: add Add", map[string]string{"go.mod": GoMod, "calc/calc.go": AddGood, "calc/calc_test.go": CalcTest})}
	for i := 1; i <= 8; i++ {
		if i == 5 {
			shas = append(shas, r.Commit("calc: round Add", map[string]string{"calc/calc.go": "package calc\n\n// Add adds.\nfunc Add(x, y int) int { return round(x + y) }\n"}))
			continue
		}
		shas = append(shas, r.Commit(fmt.Sprintf("docs: note %d", i), map[string]string{fmt.Sprintf("notes/%d.txt", i): fmt.Sprintf("note %d\n", i)}))
	}
	return r, shas
}

// RunCache is an in-memory bisect.RunCache.
type RunCache struct {
	mu   sync.Mutex
	runs map[string]map[string]task.CommitRuns
}

// NewRunCache is an empty RunCache.
func NewRunCache() *RunCache {
	return &RunCache{runs: map[string]map[string]task.CommitRuns{}}
}

// CommitRuns is a copy of the test's runs by commit.
func (c *RunCache) CommitRuns(_ context.Context, id string) (map[string]task.CommitRuns, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]task.CommitRuns{}
	maps.Copy(out, c.runs[id])
	return out, nil
}

// AddCommitRuns adds runs of the test at commit sha.
func (c *RunCache) AddCommitRuns(_ context.Context, id, sha string, r task.CommitRuns) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs[id] == nil {
		c.runs[id] = map[string]task.CommitRuns{}
	}
	c.runs[id][sha] = c.runs[id][sha].Add(r)
	return nil
}

// At is the test's runs at commit sha.
func (c *RunCache) At(id, sha string) task.CommitRuns {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id][sha]
}
