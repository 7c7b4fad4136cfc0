package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/redfix/redfix/pkg/forge"
)

// changeRequest is pr in the forge's words.
func (f *Forge) changeRequest(repo forge.RepoID, pr *gogithub.PullRequest) forge.ChangeRequest {
	c := forge.ChangeRequest{
		Repo: repo, Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Title: pr.GetTitle(), Body: pr.GetBody(),
		State: forge.State(pr.GetState()), Head: pr.GetHead().GetRef(), HeadSHA: pr.GetHead().GetSHA(), Base: pr.GetBase().GetRef(),
		Author: User(pr.GetUser()), Commits: pr.GetCommits(), UpdatedAt: pr.GetUpdatedAt().Time, ClosedAt: pr.GetClosedAt().Time,
	}
	if pr.GetMerged() || pr.GetState() == "closed" && !pr.GetMergedAt().IsZero() {
		c.State = forge.StateMerged
		if !pr.GetMergedAt().IsZero() {
			c.ClosedAt = pr.GetMergedAt().Time
		}
	}
	return c
}

// User is u in the forge's words: an App's account, or one whose login
// says it is a bot, is a bot.
func User(u *gogithub.User) forge.User {
	login := u.GetLogin()
	return forge.User{Login: login, Bot: strings.EqualFold(u.GetType(), "Bot") || strings.HasSuffix(login, "[bot]")}
}

// ChangeRequest reads pull request number of repo.
func (f *Forge) ChangeRequest(ctx context.Context, repo forge.RepoID, number int) (forge.ChangeRequest, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return forge.ChangeRequest{}, err
	}
	pr, _, err := cl.PullRequests.Get(ctx, owner, name, number)
	if err != nil {
		return forge.ChangeRequest{}, fmt.Errorf("read pull request %s/%s#%d: %w", owner, name, number, err)
	}
	return f.changeRequest(repo, pr), nil
}

// FindChangeRequest is the pull request from head (a branch of repo), the
// open one when open is set, else one in any state; nil when there is
// none.
func (f *Forge) FindChangeRequest(ctx context.Context, repo forge.RepoID, head string, open bool) (*forge.ChangeRequest, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return nil, err
	}
	state := "all"
	if open {
		state = "open"
	}
	prs, _, err := cl.PullRequests.List(ctx, owner, name, &gogithub.PullRequestListOptions{
		State: state, Head: owner + ":" + head, ListOptions: gogithub.ListOptions{PerPage: 10},
	})
	if err != nil {
		return nil, fmt.Errorf("look up the pull request of %s: %w", head, err)
	}
	for _, p := range prs {
		if p.GetHead().GetRef() == head {
			c := f.changeRequest(repo, p)
			return &c, nil
		}
	}
	return nil, nil
}

// OpenChangeRequest opens a pull request that maintainers may push to. A
// pull request GitHub refuses as invalid (422, which it answers when the
// branch has one already) wraps forge.ErrExists.
func (f *Forge) OpenChangeRequest(ctx context.Context, repo forge.RepoID, n forge.NewChangeRequest) (forge.ChangeRequest, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return forge.ChangeRequest{}, err
	}
	created, resp, err := cl.PullRequests.Create(ctx, owner, name, &gogithub.NewPullRequest{
		Title: gogithub.String(n.Title), Head: gogithub.String(n.Head), Base: gogithub.String(n.Base),
		Body: gogithub.String(n.Body), Draft: gogithub.Bool(n.Draft), MaintainerCanModify: gogithub.Bool(true),
	})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			return forge.ChangeRequest{}, fmt.Errorf("open a pull request from %s: %w: %w", n.Head, forge.ErrExists, err)
		}
		return forge.ChangeRequest{}, fmt.Errorf("open a pull request from %s: %w", n.Head, err)
	}
	return f.changeRequest(repo, created), nil
}

// CloseChangeRequest closes pull request number of repo without merging
// it. Closing one already closed is not an error.
func (f *Forge) CloseChangeRequest(ctx context.Context, repo forge.RepoID, number int) error {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return err
	}
	if _, _, err := cl.PullRequests.Edit(ctx, owner, name, number, &gogithub.PullRequest{State: gogithub.String("closed")}); err != nil {
		return fmt.Errorf("close pull request %s/%s#%d: %w", owner, name, number, err)
	}
	return nil
}

// OpenChangeRequests lists repo's open pull requests as l narrows them,
// paging at most maxListPages of 100.
func (f *Forge) OpenChangeRequests(ctx context.Context, repo forge.RepoID, l forge.Listing) ([]forge.ChangeRequest, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return nil, err
	}
	opts := &gogithub.PullRequestListOptions{State: "open", ListOptions: gogithub.ListOptions{PerPage: 100}}
	if l.RecentlyUpdated {
		opts.Sort, opts.Direction = "updated", "desc"
	}
	if l.Limit > 0 && l.HeadPrefix == "" {
		opts.PerPage = min(l.Limit, 100)
	}
	var out []forge.ChangeRequest
	for range maxListPages {
		prs, resp, err := cl.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return nil, fmt.Errorf("list the open pull requests of %s/%s: %w", owner, name, err)
		}
		for _, pr := range prs {
			if !strings.HasPrefix(pr.GetHead().GetRef(), l.HeadPrefix) {
				continue
			}
			out = append(out, f.changeRequest(repo, pr))
			if l.Limit > 0 && len(out) == l.Limit {
				return out, nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// ChangedFiles are the paths pull request number changes (the first 100).
func (f *Forge) ChangedFiles(ctx context.Context, repo forge.RepoID, number int) ([]string, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return nil, err
	}
	files, _, err := cl.PullRequests.ListFiles(ctx, owner, name, number, &gogithub.ListOptions{PerPage: 100})
	if err != nil {
		return nil, fmt.Errorf("list the files of %s/%s#%d: %w", owner, name, number, err)
	}
	var out []string
	for _, c := range files {
		out = append(out, c.GetFilename())
	}
	return out, nil
}

// AddLabel labels pull request (or issue) number, in the form GitHub
// documents ({"labels": [...]}; go-github sends a bare array).
func (f *Forge) AddLabel(ctx context.Context, repo forge.RepoID, number int, label string) error {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return err
	}
	req, err := cl.NewRequest("POST", fmt.Sprintf("repos/%s/%s/issues/%d/labels", owner, name, number), map[string][]string{"labels": {label}})
	if err != nil {
		return err
	}
	if _, err := cl.Do(ctx, req, nil); err != nil {
		return fmt.Errorf("label %s/%s#%d %s: %w", owner, name, number, label, err)
	}
	return nil
}

// RequestReviews asks reviewers (logins, and teams as "org/team") for a
// review of pull request number; a team of another organization than the
// repository's owner is left out. One reviewer GitHub refuses (not a
// collaborator, the author) fails the whole request, so each is then
// asked alone; the error names those refused.
func (f *Forge) RequestReviews(ctx context.Context, repo forge.RepoID, number int, reviewers []string) error {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return err
	}
	var users, teams []string
	for _, r := range reviewers {
		if org, team, isTeam := strings.Cut(r, "/"); isTeam {
			if strings.EqualFold(org, owner) {
				teams = append(teams, team)
			}
			continue
		}
		users = append(users, r)
	}
	if len(users) == 0 && len(teams) == 0 {
		return nil
	}
	if _, _, err := cl.PullRequests.RequestReviewers(ctx, owner, name, number, gogithub.ReviewersRequest{Reviewers: users, TeamReviewers: teams}); err == nil {
		return nil
	}
	var errs []error
	for _, u := range users {
		if _, _, err := cl.PullRequests.RequestReviewers(ctx, owner, name, number, gogithub.ReviewersRequest{Reviewers: []string{u}}); err != nil {
			errs = append(errs, fmt.Errorf("review not requested from %s: %w", u, err))
		}
	}
	for _, tm := range teams {
		if _, _, err := cl.PullRequests.RequestReviewers(ctx, owner, name, number, gogithub.ReviewersRequest{TeamReviewers: []string{tm}}); err != nil {
			errs = append(errs, fmt.Errorf("review not requested from team %s: %w", tm, err))
		}
	}
	return errors.Join(errs...)
}

// CommitAuthor is the GitHub account that authored sha of repo; the zero
// User when the author is no GitHub user.
func (f *Forge) CommitAuthor(ctx context.Context, repo forge.RepoID, sha string) (forge.User, error) {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return forge.User{}, err
	}
	c, _, err := cl.Repositories.GetCommit(ctx, owner, name, sha, nil)
	if err != nil {
		return forge.User{}, fmt.Errorf("read commit %s of %s/%s: %w", sha, owner, name, err)
	}
	if c.GetAuthor() == nil {
		return forge.User{}, nil
	}
	return User(c.GetAuthor()), nil
}

// DeleteBranch deletes branch of repo.
func (f *Forge) DeleteBranch(ctx context.Context, repo forge.RepoID, branch string) error {
	cl, owner, name, err := f.client(ctx, repo)
	if err != nil {
		return err
	}
	if _, err := cl.Git.DeleteRef(ctx, owner, name, "heads/"+branch); err != nil {
		return fmt.Errorf("delete branch %s of %s/%s: %w", branch, owner, name, err)
	}
	return nil
}
