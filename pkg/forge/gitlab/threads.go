package gitlab

import (
	"context"
	"fmt"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/redfix/redfix/pkg/forge"
)

// ChangesRequested reads discussion thread id of merge request number of
// repo through the API. GitLab has no review that requests changes: a
// resolvable thread left unresolved is how a reviewer asks for one. When
// note opened the thread, and the thread is resolvable and unresolved,
// ok is true and rv is the review it amounts to, its author and words the
// API's (never the hook's); a reply, a thread already resolved, a system
// note and a note standing alone are none.
func (f *Forge) ChangesRequested(ctx context.Context, repo forge.RepoID, number int, id string, note int64) (rv forge.Review, ok bool, err error) {
	path, err := f.project(repo)
	if err != nil {
		return forge.Review{}, false, err
	}
	d, _, err := f.c.Discussions.GetMergeRequestDiscussion(path, int64(number), id, gl.WithContext(ctx))
	if err != nil {
		return forge.Review{}, false, fmt.Errorf("read thread %s of merge request %s!%d: %w", id, path, number, err)
	}
	if d.IndividualNote || len(d.Notes) == 0 {
		return forge.Review{}, false, nil
	}
	first := d.Notes[0]
	if first.ID != note || first.System || !first.Resolvable || first.Resolved {
		return forge.Review{}, false, nil
	}
	at := time.Now()
	if first.CreatedAt != nil {
		at = *first.CreatedAt
	}
	return forge.Review{
		Repo: repo, Number: number, Author: UserOf(first.Author.Username),
		State: forge.ReviewChangesRequested, Body: first.Body, At: at,
	}, true, nil
}
