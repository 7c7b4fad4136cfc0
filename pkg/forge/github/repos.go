package github

import (
	"context"
	"fmt"
	"strings"

	gogithub "github.com/google/go-github/v62/github"
)

// maxListPages bounds each listing of installations and of an
// installation's repositories (100 a page).
const maxListPages = 10

// Repositories are the repositories redfix looks at: those of the App's
// installations, or, with a plain token (which has no installations),
// those named ("owner/name"; a pattern such as "owner/*" is skipped, and a
// repository named twice is fetched once).
func (c *Clients) Repositories(ctx context.Context, named []string) ([]*gogithub.Repository, error) {
	if c.app == nil {
		return c.namedRepositories(ctx, named)
	}
	return c.installedRepositories(ctx)
}

// namedRepositories fetches each repository of names.
func (c *Clients) namedRepositories(ctx context.Context, names []string) ([]*gogithub.Repository, error) {
	var repos []*gogithub.Repository
	seen := map[string]bool{}
	for _, n := range names {
		owner, name, ok := strings.Cut(n, "/")
		if !ok || strings.ContainsAny(n, "*?[") || seen[strings.ToLower(n)] {
			continue
		}
		seen[strings.ToLower(n)] = true
		cl, err := c.ForRepo(ctx, owner, name)
		if err != nil {
			return nil, err
		}
		repo, _, err := cl.Repositories.Get(ctx, owner, name)
		if err != nil {
			return nil, fmt.Errorf("get repository %s: %w", n, err)
		}
		repos = append(repos, repo)
	}
	return repos, nil
}

// installedRepositories pages through the App's installations and each
// one's repositories.
func (c *Clients) installedRepositories(ctx context.Context) ([]*gogithub.Repository, error) {
	var repos []*gogithub.Repository
	opts := &gogithub.ListOptions{PerPage: 100}
	for range maxListPages {
		insts, resp, err := c.app.Apps.ListInstallations(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list the app's installations: %w", err)
		}
		for _, in := range insts {
			cl, err := c.ForInstallation(in.GetID())
			if err != nil {
				return nil, err
			}
			ropts := &gogithub.ListOptions{PerPage: 100}
			for range maxListPages {
				list, rresp, err := cl.Apps.ListRepos(ctx, ropts)
				if err != nil {
					return nil, fmt.Errorf("list repositories of installation %d: %w", in.GetID(), err)
				}
				repos = append(repos, list.Repositories...)
				if rresp.NextPage == 0 {
					break
				}
				ropts.Page = rresp.NextPage
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return repos, nil
}
