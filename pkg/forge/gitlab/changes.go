package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/redfix/redfix/pkg/forge"
)

// draftPrefix is how a merge request is opened as a draft: GitLab reads
// it from the title.
const draftPrefix = "Draft: "

// maxListPages bounds the pages of 100 a listing reads.
const maxListPages = 10

// changeRequest is mr in the forge's words; a draft's title is given
// without the prefix that made it one.
func (f *Forge) changeRequest(repo forge.RepoID, mr *gl.BasicMergeRequest) forge.ChangeRequest {
	c := forge.ChangeRequest{
		Repo: repo, Number: int(mr.IID), URL: mr.WebURL, Title: mr.Title, Body: mr.Description,
		Head: mr.SourceBranch, HeadSHA: mr.SHA, Base: mr.TargetBranch, State: stateOf(mr.State),
		UpdatedAt: timeOf(mr.UpdatedAt), ClosedAt: timeOf(mr.ClosedAt),
	}
	if mr.Draft {
		c.Title = strings.TrimPrefix(c.Title, draftPrefix)
	}
	if mr.Author != nil {
		c.Author = UserOf(mr.Author.Username)
	}
	if c.State == forge.StateMerged {
		c.ClosedAt = timeOf(mr.MergedAt)
	}
	return c
}

// stateOf is a merge request's state in the forge's words (a locked one
// is still open).
func stateOf(s string) forge.State {
	switch s {
	case "merged":
		return forge.StateMerged
	case "closed":
		return forge.StateClosed
	}
	return forge.StateOpen
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// ChangeRequest reads merge request number of repo.
func (f *Forge) ChangeRequest(ctx context.Context, repo forge.RepoID, number int) (forge.ChangeRequest, error) {
	path, err := f.project(repo)
	if err != nil {
		return forge.ChangeRequest{}, err
	}
	mr, _, err := f.c.MergeRequests.GetMergeRequest(path, int64(number), nil, gl.WithContext(ctx))
	if err != nil {
		return forge.ChangeRequest{}, fmt.Errorf("read merge request %s!%d: %w", path, number, err)
	}
	return f.changeRequest(repo, &mr.BasicMergeRequest), nil
}

// Commits is how many commits merge request number holds.
func (f *Forge) Commits(ctx context.Context, repo forge.RepoID, number int) (int, error) {
	path, err := f.project(repo)
	if err != nil {
		return 0, err
	}
	n := 0
	opts := &gl.GetMergeRequestCommitsOptions{ListOptions: gl.ListOptions{PerPage: 100}}
	for range maxListPages {
		cs, resp, err := f.c.MergeRequests.GetMergeRequestCommits(path, int64(number), opts, gl.WithContext(ctx))
		if err != nil {
			return 0, fmt.Errorf("list the commits of %s!%d: %w", path, number, err)
		}
		n += len(cs)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return n, nil
}

// FindChangeRequest is the merge request from head (a branch of repo),
// the open one when open is set, else one in any state; nil when there is
// none.
func (f *Forge) FindChangeRequest(ctx context.Context, repo forge.RepoID, head string, open bool) (*forge.ChangeRequest, error) {
	path, err := f.project(repo)
	if err != nil {
		return nil, err
	}
	state := "all"
	if open {
		state = "opened"
	}
	mrs, _, err := f.c.MergeRequests.ListProjectMergeRequests(path, &gl.ListProjectMergeRequestsOptions{
		State: gl.Ptr(state), SourceBranch: gl.Ptr(head), ListOptions: gl.ListOptions{PerPage: 20},
	}, gl.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("look up the merge request of %s in %s: %w", head, path, err)
	}
	for _, mr := range mrs {
		if mr.SourceBranch == head && (mr.SourceProjectID == 0 || mr.SourceProjectID == mr.TargetProjectID) {
			c := f.changeRequest(repo, mr)
			return &c, nil
		}
	}
	return nil, nil
}

// OpenChangeRequest opens a merge request from a branch of repo, a draft
// when n.Draft is set (its title then starts with "Draft: "), whose source
// branch is removed when it is merged. One GitLab refuses because the
// branch has an open one already (409) wraps forge.ErrExists.
func (f *Forge) OpenChangeRequest(ctx context.Context, repo forge.RepoID, n forge.NewChangeRequest) (forge.ChangeRequest, error) {
	path, err := f.project(repo)
	if err != nil {
		return forge.ChangeRequest{}, err
	}
	title := n.Title
	if n.Draft {
		title = draftPrefix + title
	}
	mr, _, err := f.c.MergeRequests.CreateMergeRequest(path, &gl.CreateMergeRequestOptions{
		Title: gl.Ptr(title), Description: gl.Ptr(clipNote(n.Body)), SourceBranch: gl.Ptr(n.Head), TargetBranch: gl.Ptr(n.Base),
		RemoveSourceBranch: gl.Ptr(true),
	}, gl.WithContext(ctx))
	if err != nil {
		if gl.HasStatusCode(err, http.StatusConflict) {
			return forge.ChangeRequest{}, fmt.Errorf("open a merge request from %s in %s: %w: %w", n.Head, path, forge.ErrExists, err)
		}
		return forge.ChangeRequest{}, fmt.Errorf("open a merge request from %s in %s: %w", n.Head, path, err)
	}
	return f.changeRequest(repo, &mr.BasicMergeRequest), nil
}

// CloseChangeRequest closes merge request number of repo without merging
// it. Closing one that is not open is not an error.
func (f *Forge) CloseChangeRequest(ctx context.Context, repo forge.RepoID, number int) error {
	c, err := f.ChangeRequest(ctx, repo, number)
	if err != nil {
		return err
	}
	if c.State != forge.StateOpen {
		return nil
	}
	path, _ := f.project(repo)
	if _, _, err := f.c.MergeRequests.UpdateMergeRequest(path, int64(number), &gl.UpdateMergeRequestOptions{StateEvent: gl.Ptr("close")}, gl.WithContext(ctx)); err != nil {
		return fmt.Errorf("close merge request %s!%d: %w", path, number, err)
	}
	return nil
}

// OpenChangeRequests lists repo's open merge requests as l narrows them,
// paging at most maxListPages of 100.
func (f *Forge) OpenChangeRequests(ctx context.Context, repo forge.RepoID, l forge.Listing) ([]forge.ChangeRequest, error) {
	path, err := f.project(repo)
	if err != nil {
		return nil, err
	}
	opts := &gl.ListProjectMergeRequestsOptions{State: gl.Ptr("opened"), OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("desc"), ListOptions: gl.ListOptions{PerPage: 100}}
	if l.RecentlyUpdated {
		opts.OrderBy = gl.Ptr("updated_at")
	}
	if l.Limit > 0 && l.HeadPrefix == "" {
		opts.PerPage = int64(min(l.Limit, 100))
	}
	var out []forge.ChangeRequest
	for range maxListPages {
		mrs, resp, err := f.c.MergeRequests.ListProjectMergeRequests(path, opts, gl.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("list the open merge requests of %s: %w", path, err)
		}
		for _, mr := range mrs {
			if !strings.HasPrefix(mr.SourceBranch, l.HeadPrefix) {
				continue
			}
			out = append(out, f.changeRequest(repo, mr))
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

// ChangedFiles are the paths merge request number changes (the first 100
// files; a deleted file by its old path).
func (f *Forge) ChangedFiles(ctx context.Context, repo forge.RepoID, number int) ([]string, error) {
	path, err := f.project(repo)
	if err != nil {
		return nil, err
	}
	diffs, _, err := f.c.MergeRequests.ListMergeRequestDiffs(path, int64(number), &gl.ListMergeRequestDiffsOptions{ListOptions: gl.ListOptions{PerPage: 100}}, gl.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("list the files of %s!%d: %w", path, number, err)
	}
	var out []string
	for _, d := range diffs {
		p := d.NewPath
		if d.DeletedFile || p == "" {
			p = d.OldPath
		}
		out = append(out, p)
	}
	return out, nil
}

// AddLabel labels merge request number.
func (f *Forge) AddLabel(ctx context.Context, repo forge.RepoID, number int, label string) error {
	path, err := f.project(repo)
	if err != nil {
		return err
	}
	labels := gl.LabelOptions{label}
	if _, _, err := f.c.MergeRequests.UpdateMergeRequest(path, int64(number), &gl.UpdateMergeRequestOptions{AddLabels: &labels}, gl.WithContext(ctx)); err != nil {
		return fmt.Errorf("label %s!%d %s: %w", path, number, label, err)
	}
	return nil
}

// DeleteBranch deletes branch of repo.
func (f *Forge) DeleteBranch(ctx context.Context, repo forge.RepoID, branch string) error {
	path, err := f.project(repo)
	if err != nil {
		return err
	}
	if _, err := f.c.Branches.DeleteBranch(path, branch, gl.WithContext(ctx)); err != nil {
		return fmt.Errorf("delete branch %s of %s: %w", branch, path, err)
	}
	return nil
}

// userID is the id of the account login; 0 when there is none.
func (f *Forge) userID(ctx context.Context, login string) (int64, error) {
	users, _, err := f.c.Users.ListUsers(&gl.ListUsersOptions{Username: gl.Ptr(login)}, gl.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("look up the account %s: %w", login, err)
	}
	for _, u := range users {
		if strings.EqualFold(u.Username, login) {
			return u.ID, nil
		}
	}
	return 0, nil
}

// RequestReviews adds reviewers (logins) to merge request number, beside
// those it has. A team ("group/team") is no reviewer on GitLab and is left
// out; a login with no account is named in the error, the others are
// still asked.
func (f *Forge) RequestReviews(ctx context.Context, repo forge.RepoID, number int, reviewers []string) error {
	path, err := f.project(repo)
	if err != nil {
		return err
	}
	mr, _, err := f.c.MergeRequests.GetMergeRequest(path, int64(number), nil, gl.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("read merge request %s!%d: %w", path, number, err)
	}
	var ids []int64
	for _, r := range mr.Reviewers {
		ids = append(ids, r.ID)
	}
	var errs []error
	added := 0
	for _, login := range reviewers {
		if strings.Contains(login, "/") {
			continue
		}
		id, err := f.userID(ctx, login)
		if err == nil && id == 0 {
			err = fmt.Errorf("review not requested from %s: no such account", login)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, id)
		added++
	}
	if added > 0 {
		if _, _, err := f.c.MergeRequests.UpdateMergeRequest(path, int64(number), &gl.UpdateMergeRequestOptions{ReviewerIDs: &ids}, gl.WithContext(ctx)); err != nil {
			errs = append(errs, fmt.Errorf("request reviews on %s!%d: %w", path, number, err))
		}
	}
	return errors.Join(errs...)
}

// CommitAuthor is the account whose public e-mail is the author's of sha
// of repo; the zero User when none shows it.
func (f *Forge) CommitAuthor(ctx context.Context, repo forge.RepoID, sha string) (forge.User, error) {
	path, err := f.project(repo)
	if err != nil {
		return forge.User{}, err
	}
	c, _, err := f.c.Commits.GetCommit(path, sha, nil, gl.WithContext(ctx))
	if err != nil {
		return forge.User{}, fmt.Errorf("read commit %s of %s: %w", sha, path, err)
	}
	if c.AuthorEmail == "" {
		return forge.User{}, nil
	}
	users, _, err := f.c.Users.ListUsers(&gl.ListUsersOptions{Search: gl.Ptr(c.AuthorEmail)}, gl.WithContext(ctx))
	if err != nil {
		return forge.User{}, fmt.Errorf("look up the author of %s: %w", sha, err)
	}
	// A search shows others' accounts without their e-mail: each found is
	// read whole, and only one whose public e-mail is the author's counts.
	for i, u := range users {
		if i == maxAuthorCandidates {
			break
		}
		full, _, err := f.c.Users.GetUser(u.ID, nil, gl.WithContext(ctx))
		if err != nil {
			return forge.User{}, fmt.Errorf("read account %s: %w", u.Username, err)
		}
		if strings.EqualFold(full.PublicEmail, c.AuthorEmail) || strings.EqualFold(full.Email, c.AuthorEmail) {
			return forge.User{Login: full.Username, Bot: full.Bot || UserOf(full.Username).Bot}, nil
		}
	}
	return forge.User{}, nil
}

// maxAuthorCandidates bounds the accounts read to find a commit's author.
const maxAuthorCandidates = 5
