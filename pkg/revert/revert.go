package revert

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// ErrRefused wraps every reason not to revert: a rule said no. Other
// errors are the machinery's.
var ErrRefused = errors.New("no revert")

func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Ledger is the revert ledger and the groups' publications (store.Store):
// a culprit is reverted once, and a group's fix and revert are never both
// open (both take the group's publish claim and record its pull request).
type Ledger interface {
	ClaimRevert(ctx context.Context, culprit, owner string, ttl time.Duration) (bool, string, error)
	ReleaseRevert(ctx context.Context, culprit, owner string) error
	MarkReverted(ctx context.Context, culprit, url string) error
	Published(ctx context.Context, fingerprint string) (url string, ok bool, err error)
	ClaimPublish(ctx context.Context, fingerprint, owner string, ttl time.Duration) (bool, error)
	ReleasePublish(ctx context.Context, fingerprint, owner string) error
	MarkPublished(ctx context.Context, fingerprint, url string) error
}

// Fixes records the pull requests whose outcome is followed (store.Store).
type Fixes interface {
	RecordPublished(ctx context.Context, f task.Fix) (bool, error)
}

// Changes reads a change request's address on its forge (forge.Forges).
type Changes interface {
	FixOf(url string) (task.Fix, bool)
}

// Publisher opens the revert's pull request (publish.Forge).
type Publisher interface {
	PublishRevert(ctx context.Context, r publish.Revert) (string, error)
}

// Checkouts gives fresh work trees and the default branch's head
// (workspace.Mirrors).
type Checkouts interface {
	Open(ctx context.Context, repo, commit, parent string) (*workspace.Workspace, error)
	DefaultHead(ctx context.Context, src string) (branch, commit string, err error)
}

// Languages chooses a checkout's language driver (lang.Drivers).
type Languages interface {
	For(repo, dir string) (lang.Driver, error)
}

// Tasks finds a group's task for a person's request (store.Store).
type Tasks interface {
	FindTasks(ctx context.Context, f task.Filter) ([]task.Task, error)
}

// Reverter decides on, makes, checks and publishes reverts.
type Reverter struct {
	Policy Policy
	Ledger Ledger
	Fixes  Fixes // nil: the pull request's outcome is not followed
	// Changes tells which pull requests are on a forge whose events
	// follow their outcome (nil: none is).
	Changes   Changes
	Publisher Publisher
	Checkouts Checkouts
	Languages Languages
	Tasks     Tasks // for OpenRevert
	WorkDir   string
	// Now is the clock the culprit's age is measured with (time.Now when
	// nil).
	Now func() time.Time
	Log *zap.Logger
}

// claimTTL bounds how long a claim outlives a worker that died while
// reverting.
const claimTTL = 15 * time.Minute

func (r *Reverter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Revert reverts t's culprit for cause and returns the revert pull
// request's page: the one opened now, or the culprit's revert opened
// before. A revert the rules refuse is an error wrapping ErrRefused, with
// the reason. repo, when not nil, is the repository's own revert policy
// (its .redfix.yaml): it narrows the Reverter's, never widens it.
func (r *Reverter) Revert(ctx context.Context, t task.Task, cause Cause, repo *Repo) (string, error) {
	pol := r.Policy.Narrowed(repo)
	culprit := t.Bisection.Blame
	if !pol.Enabled {
		return "", refused("reverts are turned off")
	}
	if culprit == "" {
		return "", refused("triage blamed no commit")
	}
	// What needs no git is decided before anything is claimed or cloned.
	if cause == FirstPaths && len(pol.FirstPaths) == 0 {
		return "", refused("the repository reverts no path first")
	}
	if cause != Asked && t.Bisection.Confidence < pol.MinConfidence {
		return "", refused("triage's confidence in %s is %.3f, under %.3f", task.Short(culprit), t.Bisection.Confidence, pol.MinConfidence)
	}
	log := r.Log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo), zap.String("culprit", culprit), zap.Stringer("cause", cause))
	ctx = sandbox.WithRepo(ctx, t.Repo)
	owner := claimOwner(t.ID)
	ok, url, err := r.Ledger.ClaimRevert(ctx, culprit, owner, claimTTL)
	if err != nil {
		return "", err
	}
	if !ok {
		if url != "" {
			log.Info("the culprit was reverted before: not reverting it twice", zap.String("pull_request", url))
			return url, nil
		}
		return "", refused("%s is being reverted by another worker", task.Short(culprit))
	}
	done := false
	defer func() {
		if !done {
			if err := r.Ledger.ReleaseRevert(context.WithoutCancel(ctx), culprit, owner); err != nil {
				log.Warn("release the revert claim", zap.Error(err))
			}
		}
	}()
	// A fix and a revert of one group are never both open: the revert
	// takes the group's publish claim, as a fix does.
	if url, ok, err := r.Ledger.Published(ctx, t.Fingerprint); err != nil {
		return "", err
	} else if ok {
		return "", refused("the group has a pull request: %s", url)
	}
	if ok, err := r.Ledger.ClaimPublish(ctx, t.Fingerprint, owner, claimTTL); err != nil {
		return "", err
	} else if !ok {
		return "", refused("a pull request of the group is being published")
	}
	published := false
	defer func() {
		if !published {
			if err := r.Ledger.ReleasePublish(context.WithoutCancel(ctx), t.Fingerprint, owner); err != nil {
				log.Warn("release the publish claim", zap.Error(err))
			}
		}
	}()

	rv, err := r.make(ctx, t, cause, pol, log)
	if err != nil {
		return "", err
	}
	url, err = r.Publisher.PublishRevert(ctx, rv)
	if err != nil {
		return "", fmt.Errorf("revert %s: %w", task.Short(culprit), err)
	}
	if err := r.Ledger.MarkReverted(ctx, culprit, url); err != nil {
		return url, err
	}
	done = true
	if err := r.Ledger.MarkPublished(ctx, t.Fingerprint, url); err != nil {
		return url, err
	}
	published = true
	if fix, ok := r.fixOf(url); ok && r.Fixes != nil {
		fix.TaskID, fix.Fingerprint, fix.Kind = t.ID, t.Fingerprint, task.KindRevert
		if _, err := r.Fixes.RecordPublished(ctx, fix); err != nil {
			log.Warn("record the revert's pull request", zap.Error(err))
		}
	}
	log.Info("revert pull request opened", zap.String("pull_request", url))
	return url, nil
}

// fixOf is the fix a revert pull request at url is on its forge.
func (r *Reverter) fixOf(url string) (task.Fix, bool) {
	if r.Changes == nil {
		return task.Fix{}, false
	}
	return r.Changes.FixOf(url)
}

// make reverts the culprit on a fresh work tree at the default branch's
// head and runs the failing tests there.
func (r *Reverter) make(ctx context.Context, t task.Task, cause Cause, pol Policy, log *zap.Logger) (publish.Revert, error) {
	culprit := t.Bisection.Blame
	branch, head, err := r.Checkouts.DefaultHead(ctx, t.Repo)
	if err != nil {
		return publish.Revert{}, fmt.Errorf("revert %s: %w", task.Short(culprit), err)
	}
	ws, err := r.Checkouts.Open(ctx, t.Repo, head, r.WorkDir)
	if err != nil {
		return publish.Revert{}, fmt.Errorf("revert %s: %w", task.Short(culprit), err)
	}
	defer ws.Close()
	// Nothing has run in the work tree yet: git reads it as redfix's own.
	c, err := readCulprit(ctx, ws, culprit)
	if err != nil {
		return publish.Revert{}, err
	}
	if ok, why := pol.Decide(t, c, r.now(), cause); !ok {
		return publish.Revert{}, refused("%s", why)
	}
	if pol.PathAllowed != nil {
		for _, f := range c.Files {
			if ok, rule := pol.PathAllowed(f); !ok {
				return publish.Revert{}, refused("the revert would change %s: %s", f, rule)
			}
		}
	}
	rv, err := revertOn(ctx, ws, c, head)
	if err != nil {
		return publish.Revert{}, err
	}
	rv.Task, rv.Base, rv.Why = t, branch, cause.String()
	if cause == FirstPaths {
		rv.Why += " (" + pol.firstPath(c.Files) + ")"
	}
	// From here on the work tree is hostile: the tests ran in it. Only
	// the driver's outcome (written outside it) is read.
	passed, err := r.runTests(ctx, ws, t)
	if err != nil {
		return publish.Revert{}, err
	}
	rv.Tests = passed
	log.Info("reverted; the failing tests pass at the revert", zap.String("revert", rv.Commit), zap.String("head", head))
	return rv, nil
}

// readCulprit is what git says of culprit.
func readCulprit(ctx context.Context, ws *workspace.Workspace, culprit string) (Culprit, error) {
	out, err := ws.Repo.Git(ctx, "show", "-s", "--format=%H%n%P%n%ct", culprit)
	if err != nil {
		return Culprit{}, refused("%s is not in the repository: %v", task.Short(culprit), err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 {
		return Culprit{}, fmt.Errorf("revert %s: git show: %q", task.Short(culprit), out)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(lines[2]), 10, 64)
	if err != nil {
		return Culprit{}, fmt.Errorf("revert %s: committer time %q: %w", task.Short(culprit), lines[2], err)
	}
	c := Culprit{SHA: lines[0], Parents: len(strings.Fields(lines[1])), Committed: time.Unix(sec, 0).UTC()}
	if c.Parents == 1 {
		files, err := ws.Repo.Git(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-commit-id", "--no-renames", c.SHA)
		if err != nil {
			return Culprit{}, fmt.Errorf("revert %s: %w", task.Short(culprit), err)
		}
		c.Files = splitZ(files)
	}
	return c, nil
}

// revertOn makes the revert of c on the work tree at head. It refuses a
// culprit not on the default branch, one a later commit builds on (the
// rule: any commit after it on the default branch that changes one of the
// files it changed), and a revert that does not apply cleanly; and checks
// that the revert changes only the culprit's files, each back to what it
// was before the culprit.
func revertOn(ctx context.Context, ws *workspace.Workspace, c Culprit, head string) (publish.Revert, error) {
	short := task.Short(c.SHA)
	if !ws.Repo.IsAncestor(ctx, c.SHA, head) {
		return publish.Revert{}, refused("%s is not on the default branch (head %s)", short, task.Short(head))
	}
	specs := literal(c.Files)
	later, err := ws.Repo.Git(ctx, append([]string{"log", "--format=%H %s", c.SHA + ".." + head, "--"}, specs...)...)
	if err != nil {
		return publish.Revert{}, fmt.Errorf("revert %s: %w", short, err)
	}
	if later = strings.TrimSpace(later); later != "" {
		first := strings.Split(later, "\n")
		return publish.Revert{}, refused("later commits build on %s: %d changed its files since (%s)", short, len(first), first[len(first)-1])
	}
	if _, err := ws.Repo.Git(ctx, "revert", "--no-edit", c.SHA); err != nil {
		_, _ = ws.Repo.Git(ctx, "revert", "--abort")
		return publish.Revert{}, refused("the revert of %s does not apply cleanly on %s: %v", short, task.Short(head), err)
	}
	sha, err := ws.Repo.Resolve(ctx, "HEAD")
	if err != nil {
		return publish.Revert{}, fmt.Errorf("revert %s: %w", short, err)
	}
	changed, err := ws.Repo.Git(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-commit-id", "--no-renames", sha)
	if err != nil {
		return publish.Revert{}, fmt.Errorf("revert %s: %w", short, err)
	}
	got, want := splitZ(changed), slices.Clone(c.Files)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return publish.Revert{}, refused("the revert of %s changes %v, not only the culprit's files %v", short, got, want)
	}
	if diff, err := ws.Repo.Git(ctx, append([]string{"diff", "--name-only", c.SHA + "^", sha, "--"}, specs...)...); err != nil {
		return publish.Revert{}, fmt.Errorf("revert %s: %w", short, err)
	} else if strings.TrimSpace(diff) != "" {
		return publish.Revert{}, refused("the revert of %s does not put back what was before it: %s", short, strings.TrimSpace(diff))
	}
	subject, err := ws.Repo.Git(ctx, "show", "-s", "--format=%s", sha)
	if err != nil {
		return publish.Revert{}, fmt.Errorf("revert %s: %w", short, err)
	}
	return publish.Revert{Commit: sha, Subject: strings.TrimSpace(subject), Head: head}, nil
}

// runTests runs the failing tests at the revert through the language
// driver, in the sandbox: they must all pass.
func (r *Reverter) runTests(ctx context.Context, ws *workspace.Workspace, t task.Task) (string, error) {
	short := task.Short(t.Bisection.Blame)
	d, err := r.Languages.For(t.Repo, ws.Dir)
	if err != nil {
		return "", fmt.Errorf("revert %s: %w", short, err)
	}
	if err := d.Setup(ctx, ws.Dir); err != nil {
		return "", fmt.Errorf("revert %s: set up the checkout: %w", short, err)
	}
	tests := t.Tests()
	out, err := d.Run(ctx, ws.Dir, tests, 1)
	if err != nil {
		return "", fmt.Errorf("revert %s: run the failing tests: %w", short, err)
	}
	if !out.OK() {
		return "", refused("the failing tests do not pass at the revert of %s: %s", short, out.Summary())
	}
	return fmt.Sprintf("The failing tests pass at the revert (%s, run with the %s driver: %s).", strings.Join(tests, ", "), d.Name(), out.Summary()), nil
}

// OpenRevert reverts the culprit of repo's failure group, as a person
// asked (/redfix revert): the group's newest task with a culprit is the
// evidence.
func (r *Reverter) OpenRevert(ctx context.Context, repo forge.RepoID, group string) (string, error) {
	if r.Tasks == nil {
		return "", errors.New("open a revert: no task store")
	}
	// Tasks name repositories by their clone URL: the newest tasks are
	// searched for the group, in the repository.
	tasks, err := r.Tasks.FindTasks(ctx, task.Filter{Limit: 500})
	if err != nil {
		return "", fmt.Errorf("open a revert for %s: %w", group, err)
	}
	for _, t := range tasks { // newest first
		if t.Fingerprint != group || t.Bisection.Blame == "" {
			continue
		}
		if id, err := forge.RepoOf(t.Repo); err == nil && id.Same(repo) {
			return r.Revert(ctx, t, Asked, nil)
		}
	}
	return "", refused("no task of group %s in %s names a culprit", group, repo.Path)
}

// literal makes paths pathspecs that match themselves only.
func literal(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = ":(literal)" + f
	}
	return out
}

func splitZ(s string) []string {
	var out []string
	for _, f := range strings.Split(s, "\x00") {
		if f = strings.Trim(f, "\n"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// claimOwner is unique to one call: the task and a random token.
func claimOwner(taskID string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return taskID + "/" + hex.EncodeToString(b[:])
}
