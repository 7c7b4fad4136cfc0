package bench

import (
	"context"
	"fmt"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
)

// Bisector finds the commit between good and bad (in the repository at
// repo) that broke tests, as triage's bisection does.
type Bisector interface {
	Bisect(ctx context.Context, repo, good, bad string, tests []string) (task.Bisection, error)
}

// bisect finds the blame of a task that names its good commit, in the
// task's repository up to its base.
func (r *Runner) bisect(ctx context.Context, t Task, p prepared) (task.Bisection, error) {
	if r.Bisector == nil {
		return task.Bisection{}, fmt.Errorf("good %s: this bench cannot bisect", t.Good)
	}
	repo := gitrepo.Repo{Dir: p.repo}
	good, err := repo.Resolve(ctx, t.Good)
	if err != nil {
		return task.Bisection{}, fmt.Errorf("good %s is not in the history of the task's base: %w", t.Good, err)
	}
	b, err := r.Bisector.Bisect(ctx, p.repo, good, p.commit, t.Tests)
	if err != nil {
		return task.Bisection{}, fmt.Errorf("bisect from good %s: %w", task.Short(good), err)
	}
	if c, err := repo.Show(ctx, b.Blame); err == nil {
		b.Subject, b.Author = c.Subject, c.Author
	}
	return b, nil
}
