package triage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// memRunCache is an in-memory RunCache.
type memRunCache struct {
	mu   sync.Mutex
	runs map[string]map[string]task.CommitRuns
}

func newMemRunCache() *memRunCache {
	return &memRunCache{runs: map[string]map[string]task.CommitRuns{}}
}

func (c *memRunCache) CommitRuns(_ context.Context, id string) (map[string]task.CommitRuns, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]task.CommitRuns{}
	for k, v := range c.runs[id] {
		out[k] = v
	}
	return out, nil
}

func (c *memRunCache) AddCommitRuns(_ context.Context, id, sha string, r task.CommitRuns) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs[id] == nil {
		c.runs[id] = map[string]task.CommitRuns{}
	}
	c.runs[id][sha] = c.runs[id][sha].Add(r)
	return nil
}

// flakyAddTest is TestAdd that also fails, before Add breaks, on every
// third run (counted in a file outside the repository): a transient
// failure such as a reset connection.
func flakyAddTest(counter string) string {
	return fmt.Sprintf(`package calc

import (
	"os"
	"strconv"
	"testing"
)

func TestAdd(t *testing.T) {
	data, _ := os.ReadFile(%q)
	n, _ := strconv.Atoi(string(data))
	n++
	if err := os.WriteFile(%[1]q, []byte(strconv.Itoa(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	if n%%3 == 2 {
		t.Fatalf("run %%d: read tcp 127.0.0.1:4242: connection reset by peer", n)
	}
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %%d, want 3", got)
	}
}
`, counter)
}

// The test fails at commits before the break for a transient reason; the
// search still names the commit that broke it.
func TestBisectFlakyTestNamesTheCulprit(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f := newFixture(t)
	test := flakyAddTest(filepath.Join(t.TempDir(), "runs"))
	shas := []string{f.commit("calc", map[string]string{"go.mod": goMod, "calc/calc.go": addGood, "calc/calc_test.go": test})}
	for i := 1; i <= 12; i++ {
		files := map[string]string{fmt.Sprintf("notes/%d.txt", i): "note\n"}
		if i == 8 {
			files["calc/calc.go"] = addBad
		}
		shas = append(shas, f.commit(fmt.Sprintf("change %d", i), files))
	}
	cache := newMemRunCache()
	bis, err := Bisector{Cache: cache}.Bisect(ctx, f.dir, shas[0], shas[12], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != shas[8] || bis.Good != shas[7] {
		t.Errorf("blame %s good %s, want %s %s", task.Short(bis.Blame), task.Short(bis.Good), task.Short(shas[8]), task.Short(shas[7]))
	}
	// The search did see flakes before the break, and ran again.
	flakes := 0
	for _, sha := range shas[:8] {
		flakes += cache.runs[addTestID][sha].Failed
	}
	if flakes == 0 {
		t.Errorf("no failure before the break was seen: the test is not flaky in this history (%+v)", cache.runs[addTestID])
	}
	if bis.Confidence < DefaultConfidence || bis.FlakeRate == 0 {
		t.Errorf("confidence %.3f flake rate %.3f", bis.Confidence, bis.FlakeRate)
	}
}

// A test added after good passes before it exists; when the commit that
// adds it is the culprit, the bisection says so.
func TestBisectTestAddedAfterGood(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	for _, c := range []struct {
		name           string
		addAt, breakAt int
	}{
		{"broken later", 3, 6},
		{"added failing", 4, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			shas := []string{f.commit("calc", map[string]string{"go.mod": goMod, "calc/calc.go": addGood})}
			for i := 1; i <= 8; i++ {
				files := map[string]string{fmt.Sprintf("notes/%d.txt", i): "note\n"}
				if i == c.addAt {
					files["calc/calc_test.go"] = calcTest
				}
				if i == c.breakAt {
					files["calc/calc.go"] = addBad
				}
				shas = append(shas, f.commit(fmt.Sprintf("change %d", i), files))
			}
			bis, err := Bisect(ctx, f.dir, shas[0], shas[8], []string{addTestID})
			if err != nil {
				t.Fatal(err)
			}
			culprit := max(c.addAt, c.breakAt)
			if bis.Blame != shas[culprit] {
				t.Errorf("blame %s, want %s", task.Short(bis.Blame), task.Short(shas[culprit]))
			}
			if added := c.addAt >= c.breakAt; bis.AddedTest != added {
				t.Errorf("AddedTest = %v, want %v", bis.AddedTest, added)
			}
		})
	}
}

// Runs are kept per (commit, test) across searches: a second bisection of
// the same failure reuses them.
func TestBisectReusesCachedRuns(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := calcHistory(t)
	cache := newMemRunCache()
	first, err := Bisector{Cache: cache}.Bisect(ctx, f.dir, shas[0], shas[10], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Bisector{Cache: cache}.Bisect(ctx, f.dir, shas[0], shas[10], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Blame != shas[6] || second.Blame != shas[6] {
		t.Errorf("blames %s, %s, want %s", task.Short(first.Blame), task.Short(second.Blame), task.Short(shas[6]))
	}
	if first.CachedRuns != 0 || second.CachedRuns != first.Steps {
		t.Errorf("cached runs %d then %d, want 0 then %d", first.CachedRuns, second.CachedRuns, first.Steps)
	}
	// Only the verification at bad is run again.
	if second.Steps != 1 {
		t.Errorf("second search ran %d times, want 1", second.Steps)
	}
}

// dirRunner is the real runner, noting the checkouts it ran in.
type dirRunner struct {
	testrun.Runner
	mu   sync.Mutex
	dirs map[string]bool
}

func (r *dirRunner) Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	r.mu.Lock()
	if r.dirs == nil {
		r.dirs = map[string]bool{}
	}
	r.dirs[dir] = true
	r.mu.Unlock()
	return r.Runner.Run(ctx, dir, ids, count)
}

// Parallel runs use worktrees of their own, under the work directory,
// removed afterwards.
func TestBisectParallelWorktrees(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	f, shas := calcHistory(t)
	work := t.TempDir()
	runner := &dirRunner{}
	bis, err := Bisector{Parallel: 3, WorkDir: work, Runner: runner}.Bisect(ctx, f.dir, shas[0], shas[10], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	extra := 0
	for dir := range runner.dirs {
		switch {
		case dir == f.dir:
		case strings.HasPrefix(dir, work+string(filepath.Separator)):
			extra++
		default:
			t.Errorf("tests ran in %s, outside the work directory %s", dir, work)
		}
	}
	if extra == 0 {
		t.Errorf("no run in a worktree of the work directory: %v", runner.dirs)
	}
	if ents, err := os.ReadDir(work); err != nil || len(ents) != 0 {
		t.Errorf("left in the work directory: %v (%v)", ents, err)
	}
	if bis.Blame != shas[6] {
		t.Errorf("blame %s, want %s", task.Short(bis.Blame), task.Short(shas[6]))
	}
	out, err := f.repo.Git(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "worktree "); n != 1 {
		t.Errorf("%d worktrees left:\n%s", n, out)
	}
}
