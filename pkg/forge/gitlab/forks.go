package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gl "gitlab.com/gitlab-org/api/client-go/v2"
)

// Source is where a merge request's commits come from, and where they go.
type Source struct {
	// Fork is "" when the commits come from the project itself, else the
	// full path of the merge request's source project, a fork ("project
	// N" when the token cannot read it: a private fork is a fork all the
	// same).
	Fork string
	// Branch is the source branch (the fork's, for a fork); Target the
	// project's branch it merges into.
	Branch, Target string
}

// SourceOf reads where the commits of merge request iid of the project at
// path come from, through the API, never from a delivery's words: a
// pipeline a resync lists (which names no merge request's source) and one
// a webhook brings are judged alike.
func (f *Forge) SourceOf(ctx context.Context, path string, iid int64) (Source, error) {
	mr, _, err := f.c.MergeRequests.GetMergeRequest(path, iid, nil, gl.WithContext(ctx))
	if err != nil {
		return Source{}, fmt.Errorf("read merge request %s!%d: %w", path, iid, err)
	}
	s := Source{Branch: mr.SourceBranch, Target: mr.TargetBranch}
	if mr.SourceProjectID == mr.TargetProjectID {
		return s, nil
	}
	s.Fork = fmt.Sprintf("project %d", mr.SourceProjectID)
	p, resp, err := f.c.Projects.GetProject(mr.SourceProjectID, nil, gl.WithContext(ctx))
	switch {
	case errors.Is(err, gl.ErrNotFound), resp != nil && resp.StatusCode == http.StatusForbidden:
	case err != nil:
		return Source{}, fmt.Errorf("read the source project %d of merge request %s!%d: %w", mr.SourceProjectID, path, iid, err)
	case p.PathWithNamespace != "":
		s.Fork = p.PathWithNamespace
	}
	return s, nil
}
