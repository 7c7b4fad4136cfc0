package gh

import (
	"context"
	"fmt"

	"github.com/google/go-github/v62/github"
)

// PullRequest reads pull request number of repo ("owner/name").
func (c *Clients) PullRequest(ctx context.Context, repo string, number int) (*github.PullRequest, error) {
	cl, owner, name, err := c.forFullName(ctx, repo)
	if err != nil {
		return nil, err
	}
	pr, _, err := cl.PullRequests.Get(ctx, owner, name, number)
	if err != nil {
		return nil, fmt.Errorf("read pull request %s#%d: %w", repo, number, err)
	}
	return pr, nil
}

// ClosePullRequest closes pull request number of repo ("owner/name")
// without merging it. Closing one already closed is not an error.
func (c *Clients) ClosePullRequest(ctx context.Context, repo string, number int) error {
	cl, owner, name, err := c.forFullName(ctx, repo)
	if err != nil {
		return err
	}
	if _, _, err := cl.PullRequests.Edit(ctx, owner, name, number, &github.PullRequest{State: github.String("closed")}); err != nil {
		return fmt.Errorf("close pull request %s#%d: %w", repo, number, err)
	}
	return nil
}
