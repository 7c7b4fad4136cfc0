package fakeforge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/forge"
)

// ErrNotFound is the answer for a change request or check that is not
// there.
var ErrNotFound = errors.New("not found")

// served is id's state, or the error for a repository the fake forge does
// not have. Lock held.
func (f *Forge) served(id forge.RepoID) (*repo, error) {
	r, ok := f.repoLocked(id)
	if !ok {
		return nil, fmt.Errorf("%s: %w", id, forge.ErrNotServed)
	}
	return r, nil
}

// changeLocked is change request number of id. Lock held.
func (f *Forge) changeLocked(id forge.RepoID, number int) (*change, error) {
	r, err := f.served(id)
	if err != nil {
		return nil, err
	}
	for _, c := range r.changes {
		if c.Number == number {
			return c, nil
		}
	}
	return nil, fmt.Errorf("change request %s#%d: %w", id, number, ErrNotFound)
}

// read is c as it stands: its head's commit read from the repository.
func (f *Forge) read(c *change) forge.ChangeRequest {
	out := c.ChangeRequest
	if sha, err := f.git(c.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+c.Head); err == nil {
		out.HeadSHA = strings.TrimSpace(sha)
	}
	return out
}

// OpenChangeRequest opens a change request from a pushed branch; one from
// a branch that has an open one wraps forge.ErrExists.
func (f *Forge) OpenChangeRequest(_ context.Context, id forge.RepoID, n forge.NewChangeRequest) (forge.ChangeRequest, error) {
	if _, err := f.git(id, "rev-parse", "--verify", "-q", "refs/heads/"+n.Head); err != nil {
		return forge.ChangeRequest{}, fmt.Errorf("no branch %s: %w", n.Head, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.served(id)
	if err != nil {
		return forge.ChangeRequest{}, err
	}
	for _, c := range r.changes {
		if c.Head == n.Head && c.State == forge.StateOpen {
			return forge.ChangeRequest{}, fmt.Errorf("open a change request from %s: %w", n.Head, forge.ErrExists)
		}
	}
	number := len(r.changes) + 1
	c := &change{ChangeRequest: forge.ChangeRequest{
		Repo: r.id, Number: number, URL: URL(r.id.Path) + "/-/change/" + fmt.Sprint(number), Title: n.Title, Body: n.Body,
		State: forge.StateOpen, Head: n.Head, Base: n.Base, Author: forge.User{Login: "redfix", Bot: true}, UpdatedAt: time.Now(),
	}}
	r.changes = append(r.changes, c)
	return f.read(c), nil
}

// ChangeRequest reads change request number.
func (f *Forge) ChangeRequest(_ context.Context, id forge.RepoID, number int) (forge.ChangeRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return forge.ChangeRequest{}, err
	}
	return f.read(c), nil
}

// FindChangeRequest is the change request from head (open, or in any
// state), nil when there is none.
func (f *Forge) FindChangeRequest(_ context.Context, id forge.RepoID, head string, open bool) (*forge.ChangeRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.served(id)
	if err != nil {
		return nil, err
	}
	for _, c := range slices.Backward(r.changes) {
		if c.Head == head && (!open || c.State == forge.StateOpen) {
			out := f.read(c)
			return &out, nil
		}
	}
	return nil, nil
}

// CloseChangeRequest closes change request number; closing one closed is
// no error.
func (f *Forge) CloseChangeRequest(_ context.Context, id forge.RepoID, number int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return err
	}
	if c.State == forge.StateOpen {
		c.State, c.ClosedAt = forge.StateClosed, time.Now()
	}
	return nil
}

// OpenChangeRequests lists the open change requests as l narrows them,
// the newest first.
func (f *Forge) OpenChangeRequests(_ context.Context, id forge.RepoID, l forge.Listing) ([]forge.ChangeRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.served(id)
	if err != nil {
		return nil, err
	}
	var out []forge.ChangeRequest
	for _, c := range slices.Backward(r.changes) {
		if c.State != forge.StateOpen || !strings.HasPrefix(c.Head, l.HeadPrefix) {
			continue
		}
		out = append(out, f.read(c))
		if l.Limit > 0 && len(out) == l.Limit {
			break
		}
	}
	return out, nil
}

// ChangedFiles are the paths change request number changes.
func (f *Forge) ChangedFiles(ctx context.Context, id forge.RepoID, number int) ([]string, error) {
	c, err := f.ChangeRequest(ctx, id, number)
	if err != nil {
		return nil, err
	}
	out, err := f.git(id, "diff", "--name-only", c.Base+"..."+c.HeadSHA)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// AddLabel labels change request number.
func (f *Forge) AddLabel(_ context.Context, id forge.RepoID, number int, label string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return err
	}
	if !slices.Contains(c.labels, label) {
		c.labels = append(c.labels, label)
	}
	return nil
}

// DeleteBranch deletes branch.
func (f *Forge) DeleteBranch(_ context.Context, id forge.RepoID, branch string) error {
	_, err := f.git(id, "update-ref", "-d", "refs/heads/"+branch)
	return err
}

// RequestReviews asks people known to the fake forge for a review; anyone
// else is refused.
func (f *Forge) RequestReviews(_ context.Context, id forge.RepoID, number int, reviewers []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return err
	}
	var errs []error
	for _, rv := range reviewers {
		if _, ok := f.users[strings.ToLower(rv)]; !ok {
			errs = append(errs, fmt.Errorf("review not requested from %s: %w", rv, ErrNotFound))
			continue
		}
		c.reviewers = append(c.reviewers, rv)
	}
	return errors.Join(errs...)
}

// CommitAuthor is the person whose e-mail authored sha; the zero User for
// an address nobody has.
func (f *Forge) CommitAuthor(_ context.Context, id forge.RepoID, sha string) (forge.User, error) {
	email, err := f.git(id, "show", "-s", "--format=%ae", sha+"^{commit}")
	if err != nil {
		return forge.User{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for login, e := range f.users {
		if strings.EqualFold(e, strings.TrimSpace(email)) {
			return forge.User{Login: login}, nil
		}
	}
	return forge.User{}, nil
}
