// Package keep keeps redfix's open pull requests true: a periodic pass
// runs each one's failing tests at the default branch's head, without the
// pull request's change, in the sandbox; when they pass there (a person
// fixed it, or the test was removed), the pull request is closed with a
// comment that says which and why. When they still fail but the default
// branch moved so that the change no longer applies on top of it (checked
// by redfix's own git in the mirror, where nothing ever ran), the pull
// request is closed with the conflicting paths. The pull requests are read,
// answered and closed on their repository's forge, through its driver.
package keep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/turn"
	"github.com/redfix/redfix/pkg/workspace"
)

// Fixes are the published pull requests (store.Store).
type Fixes interface {
	OpenFixes(ctx context.Context, limit int) ([]task.Fix, error)
	GetTask(ctx context.Context, id string) (task.Task, error)
	RecordClosedByBot(ctx context.Context, repo string, number int, reason task.CloseReason, at time.Time) (task.Fix, error)
}

// Forges chooses the forge a repository lives on (forge.Forges).
type Forges interface {
	ForURL(repoURL string) (forge.Driver, forge.RepoID, error)
}

// ChangeRequests is what the pass asks of a pull request's forge: where
// it stands, and a comment saying why before it is closed.
type ChangeRequests interface {
	ChangeRequest(ctx context.Context, repo forge.RepoID, number int) (forge.ChangeRequest, error)
	Comment(ctx context.Context, repo forge.RepoID, number int, body string) (string, error)
	CloseChangeRequest(ctx context.Context, repo forge.RepoID, number int) error
}

// Kept remembers the default branch's head at which a pull request's
// failing tests last still failed (store.Store), so that a pass does not
// run them again at the same head.
type Kept interface {
	KeptHead(ctx context.Context, repo string, number int) (string, error)
	SetKeptHead(ctx context.Context, repo string, number int, head string, ttl time.Duration) error
}

// keptFor is how long a kept head is remembered.
const keptFor = 7 * 24 * time.Hour

// Checkouts gives fresh work trees, the default branch's head and the
// bare mirror of a repository (workspace.Mirrors).
type Checkouts interface {
	Open(ctx context.Context, repo, commit, parent string) (*workspace.Workspace, error)
	DefaultHead(ctx context.Context, src string) (branch, commit string, err error)
	Mirror(ctx context.Context, src, commit string) (gitrepo.Repo, error)
}

// Languages chooses a checkout's language driver (lang.Drivers).
type Languages interface {
	For(repo, dir string) (lang.Driver, error)
}

// Keeper runs the pass.
type Keeper struct {
	Fixes     Fixes
	Forges    Forges
	Checkouts Checkouts
	Languages Languages
	WorkDir   string
	// Max bounds the pull requests one pass looks at (0: 50); with more
	// open, each pass takes the next Max of them, by repository and
	// number, round.
	Max  int
	next atomic.Int64
	Log  *zap.Logger
	// Turns, when set, makes the bot's replicas run the pass once per
	// interval between them (Run): only the replica (Owner) that takes
	// the interval's turn runs it.
	Turns turn.Turns
	Owner string
	// Kept, when set, spares a pull request's tests a second run at a
	// head where they failed before (its conflict check still runs:
	// the pull request's branch may have moved).
	Kept Kept
}

// Counts are what one pass did.
type Counts struct {
	Open      int // open pull requests looked at
	Fixed     int // closed: the failing tests pass on the default branch, or are gone
	Conflicts int // closed: the change no longer applies on the default branch
	Errors    int // not decided: an error, logged (the next pass tries again)
}

// closing is why a pull request is closed, the comment that says so, and
// the forge it is closed on.
type closing struct {
	reason  task.CloseReason
	comment string
	on      on
}

// on is a pull request's repository on its forge.
type on struct {
	cr   ChangeRequests
	repo forge.RepoID
}

// forgeOf is the forge of t's repository, which must read and close pull
// requests.
func (k *Keeper) forgeOf(t task.Task) (on, error) {
	d, repo, err := k.Forges.ForURL(t.Repo)
	if err != nil {
		return on{}, err
	}
	cr, ok := d.(ChangeRequests)
	if !ok {
		return on{}, fmt.Errorf("%s on %s: %w", repo, d.Name(), forge.ErrUnsupported)
	}
	return on{cr: cr, repo: repo}, nil
}

// Pass looks at every open pull request once and closes those whose
// failing tests pass at the default branch's head, or whose change no
// longer applies there. One pull request's error is logged and counted,
// and the pass goes on.
func (k *Keeper) Pass(ctx context.Context) (Counts, error) {
	var c Counts
	limit := k.Max
	if limit <= 0 {
		limit = 50
	}
	all, err := k.Fixes.OpenFixes(ctx, 0)
	if err != nil {
		return c, err
	}
	for _, f := range window(all, int(k.next.Add(int64(limit))-int64(limit)), limit) {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		c.Open++
		log := k.Log.With(zap.String("pull_request", f.URL), zap.String("task_id", f.TaskID))
		cl, err := k.check(ctx, f)
		if err != nil {
			c.Errors++
			log.Warn("check the pull request against the default branch's head", zap.Error(err))
			continue
		}
		if cl.reason == "" {
			continue
		}
		if err := k.close(ctx, f, cl); err != nil {
			c.Errors++
			log.Warn("close the pull request", zap.Error(err))
			continue
		}
		if cl.reason == task.CloseConflict {
			c.Conflicts++
		} else {
			c.Fixed++
		}
		log.Info("closed the pull request", zap.String("reason", string(cl.reason)))
	}
	return c, nil
}

// window is limit of fixes from the start-th on, by repository and
// number, wrapping round.
func window(fixes []task.Fix, start, limit int) []task.Fix {
	if len(fixes) <= limit {
		return fixes
	}
	slices.SortFunc(fixes, func(a, b task.Fix) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Repo), strings.ToLower(b.Repo)), cmp.Compare(a.Number, b.Number))
	})
	start %= len(fixes)
	out := append([]task.Fix(nil), fixes[start:min(start+limit, len(fixes))]...)
	return append(out, fixes[:limit-len(out)]...)
}

// close comments, closes the pull request and records why.
func (k *Keeper) close(ctx context.Context, f task.Fix, cl closing) error {
	if _, err := cl.on.cr.Comment(ctx, cl.on.repo, f.Number, cl.comment); err != nil {
		return fmt.Errorf("comment before closing: %w", err)
	}
	if err := cl.on.cr.CloseChangeRequest(ctx, cl.on.repo, f.Number); err != nil {
		return err
	}
	if _, err := k.Fixes.RecordClosedByBot(ctx, f.Repo, f.Number, cl.reason, time.Now()); err != nil {
		return fmt.Errorf("record the closing: %w", err)
	}
	return nil
}

// check decides f against its repository's default head: closed when its
// failing tests no longer fail there, or when its change no longer
// applies on top of it; a zero closing while the pull request stands.
func (k *Keeper) check(ctx context.Context, f task.Fix) (closing, error) {
	t, err := k.Fixes.GetTask(ctx, f.TaskID)
	if errors.Is(err, task.ErrNotFound) {
		return closing{}, nil // its task's retention has passed: nothing to run
	}
	if err != nil {
		return closing{}, err
	}
	if len(t.Failures) == 0 {
		return closing{}, nil
	}
	where, err := k.forgeOf(t)
	if err != nil {
		return closing{}, err
	}
	ctx = sandbox.WithRepo(ctx, t.Repo)
	branch, head, err := k.Checkouts.DefaultHead(ctx, t.Repo)
	if err != nil {
		return closing{}, err
	}
	if head == t.Commit {
		return closing{}, nil // the branch has not moved: nothing new to learn
	}
	if !k.keptAt(ctx, f, head) {
		cl, err := k.retest(ctx, t, branch, head)
		if err != nil || cl.reason != "" {
			cl.on = where
			return cl, err
		}
		if k.Kept != nil {
			if err := k.Kept.SetKeptHead(ctx, f.Repo, f.Number, head, keptFor); err != nil {
				return closing{}, err
			}
		}
	}
	cl, err := k.moved(ctx, where, t, f, branch, head)
	cl.on = where
	return cl, err
}

// keptAt reports whether f's failing tests already failed at head (an
// error reading it says no: they are run again).
func (k *Keeper) keptAt(ctx context.Context, f task.Fix, head string) bool {
	if k.Kept == nil {
		return false
	}
	kept, err := k.Kept.KeptHead(ctx, f.Repo, f.Number)
	return err == nil && kept == head
}

// retest runs t's failing tests at head, in a fresh work tree in the
// sandbox, and returns the closing when they no longer fail there.
func (k *Keeper) retest(ctx context.Context, t task.Task, branch, head string) (closing, error) {
	ws, err := k.Checkouts.Open(ctx, t.Repo, head, k.WorkDir)
	if err != nil {
		return closing{}, err
	}
	defer ws.Close()
	d, err := k.Languages.For(t.Repo, ws.Dir)
	if err != nil {
		return closing{}, err
	}
	if err := d.Setup(ctx, ws.Dir); err != nil {
		return closing{}, fmt.Errorf("set up %s: %w", task.Short(head), err)
	}
	tests := t.Tests()
	out, err := d.Run(ctx, ws.Dir, tests, 1)
	if err != nil {
		return closing{}, fmt.Errorf("run the failing tests at %s: %w", task.Short(head), err)
	}
	reason, comment := Verdict(tests, out.Passed, out.Missing, len(out.Failed)+len(out.Build) > 0 || out.TimedOut, branch, head)
	return closing{reason: reason, comment: comment}, nil
}

// Verdict is why, and the closing comment, for tests run at the default
// branch's head without the pull request's change; "" while the pull
// request is still needed: some failed, or some passed and none is gone.
func Verdict(tests, passed, missing []string, failed bool, branch, head string) (task.CloseReason, string) {
	if failed || len(tests) == 0 {
		return "", ""
	}
	var gone []string
	for _, id := range tests {
		if !slices.Contains(passed, id) {
			if !slices.Contains(missing, id) {
				return "", "" // neither passed nor missing: not known to be fixed
			}
			gone = append(gone, id)
		}
	}
	at := fmt.Sprintf("%s at %s", markdown.Code(branch), markdown.Code(task.Short(head)))
	if len(gone) > 0 {
		return task.CloseTestsGone, fmt.Sprintf("Closing: the failing tests no longer exist on %s (%s: removed, or renamed), so this change is not needed any more.", at, codes(gone))
	}
	return task.CloseFixed, fmt.Sprintf("Closing: the failing tests pass on %s without this change (%s): someone fixed the failure on the default branch, so this pull request is not needed any more.", at, codes(tests))
}

func codes(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = markdown.Code(id)
	}
	return strings.Join(out, ", ")
}
