package fakeforge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/forge"
)

// Comment puts body in change request number's thread, as redfix, and
// returns its page.
func (f *Forge) Comment(_ context.Context, id forge.RepoID, number int, body string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return "", err
	}
	f.nextID++
	c.comments = append(c.comments, &comment{id: f.nextID, author: "redfix", body: body})
	return fmt.Sprintf("%s#note-%d", c.URL, f.nextID), nil
}

// Say puts login's comment in change request number's thread, as a person
// writing it would, and returns it as the fake forge's events bring it.
func (f *Forge) Say(id forge.RepoID, number int, login, body string) (forge.Comment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return forge.Comment{}, err
	}
	f.nextID++
	c.comments = append(c.comments, &comment{id: f.nextID, author: login, body: body})
	return forge.Comment{Repo: c.Repo, Number: number, OnChangeRequest: true, ID: f.nextID, Author: forge.User{Login: login}, Body: body}, nil
}

// Acknowledge marks c as heard.
func (f *Forge) Acknowledge(_ context.Context, c forge.Comment) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, err := f.changeLocked(c.Repo, c.Number)
	if err != nil {
		return err
	}
	for _, x := range ch.comments {
		if x.id == c.ID {
			x.acked = true
			return nil
		}
	}
	return fmt.Errorf("comment %d: %w", c.ID, ErrNotFound)
}

// Permission is whether user may write to the repository.
func (f *Forge) Permission(_ context.Context, id forge.RepoID, user string) (forge.Permission, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.served(id)
	if err != nil {
		return forge.Permission{}, err
	}
	if _, ok := f.users[strings.ToLower(user)]; !ok {
		return forge.Permission{}, fmt.Errorf("user %s: %w", user, ErrNotFound)
	}
	if r.perms[strings.ToLower(user)] {
		return forge.Permission{Level: "write", Write: true}, nil
	}
	return forge.Permission{Level: "read"}, nil
}

// Thread is change request number's comments, oldest first: their
// bodies, and whether each was acknowledged.
func (f *Forge) Thread(id forge.RepoID, number int) (bodies []string, acked []bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return nil, nil, err
	}
	for _, x := range c.comments {
		bodies, acked = append(bodies, x.body), append(acked, x.acked)
	}
	return bodies, acked, nil
}

// Labels and reviewers are change request number's.
func (f *Forge) Labels(id forge.RepoID, number int) (labels, reviewers []string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.changeLocked(id, number)
	if err != nil {
		return nil, nil, err
	}
	return append([]string(nil), c.labels...), append([]string(nil), c.reviewers...), nil
}

// CreateCheck makes a check on c.Commit.
func (f *Forge) CreateCheck(_ context.Context, id forge.RepoID, c forge.Check) (int64, error) {
	if c.Name == "" || c.Commit == "" {
		return 0, errors.New("a check needs a name and a commit")
	}
	if _, err := f.git(id, "rev-parse", "--verify", "-q", c.Commit+"^{commit}"); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.served(id)
	if err != nil {
		return 0, err
	}
	f.nextID++
	st := &forge.CheckState{ID: f.nextID, Commit: c.Commit}
	set(st, c)
	r.checks[c.Commit] = append(r.checks[c.Commit], st)
	return st.ID, nil
}

// UpdateCheck changes check id; its commit stays.
func (f *Forge) UpdateCheck(_ context.Context, id forge.RepoID, check int64, c forge.Check) error {
	if c.Name == "" {
		return errors.New("a check's update needs its name")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.served(id)
	if err != nil {
		return err
	}
	for _, list := range r.checks {
		for _, st := range list {
			if st.ID == check {
				set(st, c)
				return nil
			}
		}
	}
	return fmt.Errorf("check %d: %w", check, ErrNotFound)
}

// set writes what c says into st, keeping what it leaves out.
func set(st *forge.CheckState, c forge.Check) {
	st.Name = c.Name
	for _, f := range []struct {
		to *string
		v  string
	}{
		{&st.Title, c.Title}, {&st.Summary, c.Summary}, {&st.DetailsURL, c.DetailsURL}, {&st.ExternalID, c.ExternalID}, {&st.Conclusion, c.Conclusion},
	} {
		if f.v != "" {
			*f.to = f.v
		}
	}
	switch {
	case c.Conclusion != "":
		st.Status = forge.CheckCompleted
	case c.Status != "":
		st.Status = c.Status
	case st.Status == "":
		st.Status = forge.CheckQueued
	}
}

// CommitChecks lists the checks on commit (a commit or a branch), those
// named name when it is not empty.
func (f *Forge) CommitChecks(_ context.Context, id forge.RepoID, commit, name string) ([]forge.CheckState, error) {
	sha, err := f.git(id, "rev-parse", "--verify", "-q", commit+"^{commit}")
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.served(id)
	if err != nil {
		return nil, err
	}
	var out []forge.CheckState
	for _, st := range r.checks[strings.TrimSpace(sha)] {
		if name == "" || st.Name == name {
			out = append(out, *st)
		}
	}
	return out, nil
}
