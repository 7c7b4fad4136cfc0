package gitlab

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/redfix/redfix/pkg/forge"
)

// A check is a commit status on GitLab: a name, a state, a one-line
// description (the check's title, at most maxDescription characters) and
// a link. It keeps no summary, text or external id.
const maxDescription = 255

// statusRef is what GitLab sets a status by.
type statusRef struct {
	path, sha, name string
}

// maxRemembered bounds the statuses a process remembers.
const maxRemembered = 10_000

// remember keeps where status id is. It takes the lock.
func (f *Forge) remember(id int64, ref statusRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.statuses) >= maxRemembered {
		clear(f.statuses)
	}
	f.statuses[id] = ref
}

// ChecksKeepTitlesOnly says that GitLab's commit statuses keep a check's
// state, title and link, and nothing longer (no summary, text or external
// id): the forge conformance suite asks no more of them.
func (f *Forge) ChecksKeepTitlesOnly() {}

// stateFor is the status state of c: queued is pending, in progress is
// running; a neutral or skipped conclusion is skipped (a verdict that
// neither passes nor fails the commit), action_required is failed.
func stateFor(c forge.Check) gl.BuildStateValue {
	switch c.Conclusion {
	case forge.ConclusionSuccess:
		return gl.Success
	case forge.ConclusionFailure, forge.ConclusionActionRequired:
		return gl.Failed
	case forge.ConclusionNeutral, forge.ConclusionSkipped:
		return gl.Skipped
	case "cancelled":
		return gl.Canceled
	case "":
	default:
		return gl.Skipped
	}
	if c.Status == forge.CheckInProgress {
		return gl.Running
	}
	return gl.Pending
}

// checkOf reads a status back in the forge's words.
func checkOf(s *gl.CommitStatus) forge.CheckState {
	c := forge.CheckState{ID: s.ID, Name: s.Name, Commit: s.SHA, Title: s.Description, DetailsURL: s.TargetURL, URL: s.TargetURL}
	switch gl.BuildStateValue(s.Status) {
	case gl.Pending, gl.Created, gl.WaitingForResource, gl.Preparing, gl.Scheduled, gl.Manual:
		c.Status = forge.CheckQueued
	case gl.Running:
		c.Status = forge.CheckInProgress
	case gl.Success:
		c.Status, c.Conclusion = forge.CheckCompleted, forge.ConclusionSuccess
	case gl.Failed:
		c.Status, c.Conclusion = forge.CheckCompleted, forge.ConclusionFailure
	case gl.Canceled:
		c.Status, c.Conclusion = forge.CheckCompleted, "cancelled"
	default:
		c.Status, c.Conclusion = forge.CheckCompleted, forge.ConclusionNeutral
	}
	return c
}

// description is c's title cut to a status's description.
func description(c forge.Check) string {
	d := c.Title
	if d == "" {
		d = c.Name
	}
	if utf8.RuneCountInString(d) <= maxDescription {
		return d
	}
	return string([]rune(d)[:maxDescription-1]) + "…"
}

// set sets the status name on sha of the project at path as c says.
func (f *Forge) set(ctx context.Context, path, sha string, c forge.Check) (int64, error) {
	opts := &gl.SetCommitStatusOptions{State: stateFor(c), Name: gl.Ptr(c.Name), Description: gl.Ptr(description(c))}
	if c.DetailsURL != "" {
		opts.TargetURL = gl.Ptr(c.DetailsURL)
	}
	s, _, err := f.c.Commits.SetCommitStatus(path, sha, opts, gl.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("set status %q on %s@%s: %w", c.Name, path, sha, err)
	}
	f.remember(s.ID, statusRef{path: path, sha: sha, name: c.Name})
	return s.ID, nil
}

// CreateCheck sets a status on c.Commit of repo and returns its id.
func (f *Forge) CreateCheck(ctx context.Context, repo forge.RepoID, c forge.Check) (int64, error) {
	if c.Name == "" || c.Commit == "" {
		return 0, errors.New("a commit status needs a name and a commit")
	}
	path, err := f.project(repo)
	if err != nil {
		return 0, err
	}
	return f.set(ctx, path, c.Commit, c)
}

// UpdateCheck sets status id of repo again as c says (its commit stays).
// GitLab sets a status by commit and name, not by id: the status must be
// one this process created or listed (forge.UpsertCheck and the verdict
// list a commit's checks first), and c.Name must be its name. A status
// still pending or running changes in place; a finished one is followed
// by a new one of the same name, which the commit then shows.
func (f *Forge) UpdateCheck(ctx context.Context, repo forge.RepoID, id int64, c forge.Check) error {
	if c.Name == "" {
		return errors.New("a commit status's update needs its name")
	}
	path, err := f.project(repo)
	if err != nil {
		return err
	}
	f.mu.Lock()
	ref, ok := f.statuses[id]
	f.mu.Unlock()
	if !ok || ref.path != path {
		return fmt.Errorf("status %d of %s is not known here: list the commit's statuses first", id, path)
	}
	if ref.name != c.Name {
		return fmt.Errorf("status %d of %s is %q, not %q", id, path, ref.name, c.Name)
	}
	_, err = f.set(ctx, path, ref.sha, c)
	return err
}

// CommitChecks lists the latest status of each name on ref of repo, only
// those named name when it is not empty.
func (f *Forge) CommitChecks(ctx context.Context, repo forge.RepoID, ref, name string) ([]forge.CheckState, error) {
	path, err := f.project(repo)
	if err != nil {
		return nil, err
	}
	opts := &gl.GetCommitStatusesOptions{ListOptions: gl.ListOptions{PerPage: 100}}
	if name != "" {
		opts.Name = gl.Ptr(name)
	}
	var out []forge.CheckState
	for range maxListPages {
		ss, resp, err := f.c.Commits.GetCommitStatuses(path, ref, opts, gl.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("list the statuses of %s@%s: %w", path, ref, err)
		}
		for _, s := range ss {
			c := checkOf(s)
			if c.Commit == "" {
				c.Commit = ref
			}
			out = append(out, c)
			f.remember(s.ID, statusRef{path: path, sha: c.Commit, name: s.Name})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}
