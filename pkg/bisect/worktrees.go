package bisect

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/workspace"
)

// worktrees are the checkouts probes run in: the repository itself, and
// for parallel probes, detached worktrees of it (their git directories kept
// apart, as the repository's) in a scratch directory under the workspaces'
// parent (reclaimed by the workspaces' sweep if this process dies).
type worktrees struct {
	repo    gitrepo.Repo
	scratch *workspace.Scratch
	extra   []gitrepo.Repo
	slots   chan gitrepo.Repo
}

func newWorktrees(ctx context.Context, repo gitrepo.Repo, n int, parent string) (*worktrees, error) {
	w := &worktrees{repo: repo, slots: make(chan gitrepo.Repo, n)}
	w.slots <- repo
	if n <= 1 {
		return w, nil
	}
	scratch, err := workspace.NewScratch(parent)
	if err != nil {
		return nil, fmt.Errorf("worktrees: %w", err)
	}
	w.scratch = scratch
	for k := 1; k < n; k++ {
		wt, err := repo.AddWorktree(ctx, filepath.Join(scratch.Dir, fmt.Sprintf("wt%d", k)), "HEAD")
		if err != nil {
			w.close(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("worktree %d: %w", k, err)
		}
		w.extra = append(w.extra, wt)
		w.slots <- wt
	}
	return w, nil
}

// close removes the extra worktrees and their scratch directory.
func (w *worktrees) close(ctx context.Context) {
	for _, wt := range w.extra {
		_ = gitrepo.RemoveWorktree(wt)
	}
	if w.scratch != nil {
		_ = w.scratch.Close()
		_, _ = w.repo.Git(ctx, "worktree", "prune")
	}
}
