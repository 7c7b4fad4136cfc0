package gh

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
)

// BotPulls counts redfix's own open pull requests on a repository: those
// whose head branch is under its prefix.
type BotPulls struct {
	Clients *Clients
	// BranchPrefix is redfix's branches' ("redfix/" when empty).
	BranchPrefix string
}

// OpenPullRequests is how many of redfix's pull requests are open on repo
// (a repository URL); 0 for one that is not on the configured GitHub.
func (b BotPulls) OpenPullRequests(ctx context.Context, repo string) (int, error) {
	if b.Clients == nil || !b.Clients.Serves(repo) {
		return 0, nil
	}
	owner, name, err := ParseRepo(repo)
	if err != nil {
		return 0, err
	}
	cl, err := b.Clients.ForRepo(ctx, owner, name)
	if err != nil {
		return 0, err
	}
	prs, err := listBotPulls(ctx, cl, owner, name, b.BranchPrefix, 0)
	return len(prs), err
}

// OpenBotPulls lists redfix's open pull requests on repo ("owner/name"),
// the newest first, at most limit of them (0: all).
func (c *Clients) OpenBotPulls(ctx context.Context, repo string, limit int) ([]*github.PullRequest, error) {
	cl, owner, name, err := c.forFullName(ctx, repo)
	if err != nil {
		return nil, err
	}
	return listBotPulls(ctx, cl, owner, name, "", limit)
}

// listBotPulls lists the open pull requests whose head branch is under
// prefix ("redfix/" when empty), at most limit (0: all).
func listBotPulls(ctx context.Context, cl *Client, owner, name, prefix string, limit int) ([]*github.PullRequest, error) {
	if prefix == "" {
		prefix = "redfix/"
	}
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	var out []*github.PullRequest
	for range maxListPages {
		prs, resp, err := cl.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return nil, fmt.Errorf("list the open pull requests of %s/%s: %w", owner, name, err)
		}
		for _, pr := range prs {
			if strings.HasPrefix(pr.GetHead().GetRef(), prefix) {
				out = append(out, pr)
				if limit > 0 && len(out) == limit {
					return out, nil
				}
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}
