package worker

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// trustCheckouts records how each checkout's commands would run (as the
// repository's, or as an untrusted source's), and opens none.
type trustCheckouts struct {
	mu        sync.Mutex
	untrusted []bool
	repos     []string
}

var errNoCheckout = errors.New("no checkout here")

func (c *trustCheckouts) Open(ctx context.Context, repo, _, _ string) (*workspace.Workspace, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.untrusted = append(c.untrusted, sandbox.Untrusted(ctx))
	c.repos = append(c.repos, sandbox.RepoFrom(ctx))
	return nil, errNoCheckout
}

// TestForkTasksRunAsUntrusted: a task of a change request from a fork
// runs its commands, repair and revision alike, as an untrusted source
// (its setups fill caches of their own, which no trusted run reads); the
// repository's own task, as the repository's.
func TestForkTasksRunAsUntrusted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, fork := range []string{"", "mallory/shop"} {
		c := &trustCheckouts{}
		p := &Pipeline{Checkouts: c, WorkDir: t.TempDir(), Revisions: revisionsStub{}, Log: zap.NewNop()}
		tk := task.Task{ID: "t1", Repo: "https://gitlab.example.com/acme/shop.git", Commit: "abc1234567890", Fork: fork}
		_, _ = p.Repair(ctx, tk)
		_, _ = p.Revise(ctx, tk, job.Revision{Number: 3, N: 1, Head: "def4567890123"})
		if len(c.untrusted) < 2 {
			t.Fatalf("fork %q: %d checkouts, want the repair's and the revision's", fork, len(c.untrusted))
		}
		for i, u := range c.untrusted {
			if u != (fork != "") || c.repos[i] != tk.Repo {
				t.Errorf("fork %q: checkout %d untrusted %v for %q; want untrusted %v for the task's repository", fork, i, u, c.repos[i], fork != "")
			}
		}
	}
}

// revisionsStub pushes nothing: the checkout before it fails.
type revisionsStub struct{}

func (revisionsStub) PublishRevision(context.Context, publish.Revision) (string, error) {
	return "", errNoCheckout
}
