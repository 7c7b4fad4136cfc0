package bisect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/bisect/bisecttest"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// dirRunner is the real runner, noting the checkouts it ran in.
type dirRunner struct {
	golang.Runner
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
	f, shas := bisecttest.CalcHistory(t)
	work := t.TempDir()
	runner := &dirRunner{}
	bis, err := Bisector{Lang: goLang, Parallel: 3, WorkDir: work, Runner: runner}.Bisect(ctx, f.Dir, shas[0], shas[10], []string{"TestAdd"})
	if err != nil {
		t.Fatal(err)
	}
	extra := 0
	for dir := range runner.dirs {
		switch {
		case dir == f.Dir:
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
	out, err := f.Repo.Git(ctx, "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "worktree "); n != 1 {
		t.Errorf("%d worktrees left:\n%s", n, out)
	}
}
