package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// Forges chooses the driver of a repository's forge (forge.Forges).
type Forges interface {
	ForURL(repoURL string) (forge.Driver, forge.RepoID, error)
}

// ChangeRequests is what publishing asks of a repository's forge: its
// page and default branch, credentials for git, its change requests by
// branch, opening, labelling and answering one, deleting what a failed
// publish left, and the pages a description links to.
type ChangeRequests interface {
	Repository(ctx context.Context, repo forge.RepoID) (forge.Repository, error)
	Credentials(ctx context.Context, repo forge.RepoID) (forge.Credentials, error)
	FindChangeRequest(ctx context.Context, repo forge.RepoID, head string, open bool) (*forge.ChangeRequest, error)
	OpenChangeRequest(ctx context.Context, repo forge.RepoID, n forge.NewChangeRequest) (forge.ChangeRequest, error)
	AddLabel(ctx context.Context, repo forge.RepoID, number int, label string) error
	Comment(ctx context.Context, repo forge.RepoID, number int, body string) (string, error)
	DeleteBranch(ctx context.Context, repo forge.RepoID, branch string) error
	CommitURL(r forge.Repository, sha string) string
	TreeURL(r forge.Repository, commit string) string
	FileURL(r forge.Repository, commit, path string, line int) string
}

// Reviews is how a forge that has reviews asks people for one: the
// culprit's author as the forge knows them, the code owners where the
// forge reads them.
type Reviews interface {
	RequestReviews(ctx context.Context, repo forge.RepoID, number int, reviewers []string) error
	CommitAuthor(ctx context.Context, repo forge.RepoID, sha string) (forge.User, error)
	CodeOwnersFiles() []string
}

// TestFiles tells a repository's files of tests from its others, as its
// language driver does (lang.Driver's IsTestFile): the description links
// each failing test to its declaration in one of them.
type TestFiles interface {
	IsTestFile(rel string) bool
}

// Mirrors gives a local bare mirror of a repository holding a commit
// (workspace.Mirrors).
type Mirrors interface {
	Mirror(ctx context.Context, src, commit string) (gitrepo.Repo, error)
}

// Label is put on every pull request redfix opens.
const Label = "redfix"

// UnreviewedLabel marks a pull request whose patch no model reviewed (the
// judge did not pass it: the offline policy, a run without a model).
const UnreviewedLabel = "redfix:unreviewed"

// TrajectoryRefPrefix is where the trajectories are pushed: one branch per
// task, refs/heads/redfix-trajectories/<group>/<task>, holding a single
// commit (no parent, not the pull request's branch) with trajectory.jsonl,
// patch.diff, gates.json and pull_request.md.
const TrajectoryRefPrefix = "redfix-trajectories/"

// Forge publishes pull requests as change requests on the repository's
// forge, through its driver: the patch is committed in the repository's
// mirror and pushed to Branch(task) with the driver's credentials (given
// to git per command), the trajectory to a branch of its own, and the
// change request opened, labelled and given reviewers. A group's open
// change request, found by its head branch, is reported instead of opening
// another. On a plain git remote, whose driver opens no change requests
// but pushes branches (Branches), the fix is the group's branch itself
// (pushFix).
type Forge struct {
	Forges  Forges
	Mirrors Mirrors
	// Tests tells the files a failing test is declared in; nil links no
	// test.
	Tests TestFiles
	Log   *zap.Logger
}

// NewForge returns a publisher on the repositories' forges, linking the
// failing tests to their declarations in the files tests tells.
func NewForge(forges Forges, mirrors Mirrors, tests TestFiles, log *zap.Logger) *Forge {
	if log == nil {
		log = zap.NewNop()
	}
	return &Forge{Forges: forges, Mirrors: mirrors, Tests: tests, Log: log}
}

// forgeRepo is the repository a publish works on.
type forgeRepo struct {
	id   forge.RepoID
	cr   ChangeRequests
	info forge.Repository
	base string // the change request's base branch
}

// repo is repoURL's repository on its forge, whose driver must open
// change requests.
func (g *Forge) repo(repoURL string) (*forgeRepo, error) {
	d, id, err := g.Forges.ForURL(repoURL)
	if err != nil {
		return nil, err
	}
	cr, ok := d.(ChangeRequests)
	if !ok {
		return nil, fmt.Errorf("%s on %s: %w", id, d.Name(), forge.ErrUnsupported)
	}
	return &forgeRepo{id: id, cr: cr}, nil
}

// openPull is the open change request from branch, or nil.
func (r *forgeRepo) openPull(ctx context.Context, branch string) (*forge.ChangeRequest, error) {
	return r.cr.FindChangeRequest(ctx, r.id, branch, true)
}

// read reads the repository's page and default branch, the base when base
// is "".
func (r *forgeRepo) read(ctx context.Context, base string) error {
	info, err := r.cr.Repository(ctx, r.id)
	if err != nil {
		return err
	}
	r.info, r.base = info, base
	if r.base == "" {
		r.base = info.DefaultBranch
	}
	return nil
}

// Publish delivers the fix (Deliver) and returns its address.
func (g *Forge) Publish(ctx context.Context, pr PullRequest) (string, error) {
	d, err := g.Deliver(ctx, pr)
	return d.URL, err
}

// Deliver delivers the fix through the repository's forge driver: a
// change request opened on a forge that has them (or the group's open
// one), or, on a plain remote whose change request is a branch
// (Branches), the fix pushed to the group's branch, with the description
// returned for redfix to show.
func (g *Forge) Deliver(ctx context.Context, pr PullRequest) (Delivery, error) {
	d, _, err := g.Forges.ForURL(pr.Task.Repo)
	if err != nil {
		return Delivery{}, fmt.Errorf("publish task %s: %w", pr.Task.ID, err)
	}
	if _, ok := d.(ChangeRequests); !ok {
		if b, ok := d.(Branches); ok {
			return g.pushFix(ctx, b, pr)
		}
	}
	url, err := g.openChange(ctx, pr)
	return Delivery{URL: url}, err
}

// openChange pushes the fix and opens its pull request, or reports the
// group's open pull request. It returns the pull request's page.
func (g *Forge) openChange(ctx context.Context, pr PullRequest) (string, error) {
	t := pr.Task
	branch := Branch(t)
	log := g.Log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo), zap.String("fingerprint", t.Fingerprint), zap.String("branch", branch))
	r, err := g.repo(t.Repo)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	if existing, err := r.openPull(ctx, branch); err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	} else if existing != nil {
		log.Info("the group has an open pull request: not opening another", zap.String("pull_request", existing.URL))
		return existing.URL, nil
	}
	if err := r.read(ctx, t.Branch); err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	mirror, err := g.Mirrors.Mirror(ctx, t.Repo, t.Commit)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	cred, err := r.cr.Credentials(ctx, r.id)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	pr.Summary = hideSecrets(pr.Summary, cred)
	pr.Trajectory = []byte(hideSecrets(string(pr.Trajectory), cred))
	pr.Task.Failures = redactFailures(pr.Task.Failures, cred)

	title := hideSecrets(Title(pr), cred)
	fix, err := commitPatch(ctx, mirror, t.Commit, pr.Patch, commitMessage(title, pr))
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	trajRef := TrajectoryRefPrefix + strings.TrimPrefix(branch, "redfix/") + "/" + refSafe(t.ID)
	tests := testFiles(ctx, mirror, g.Tests, t)
	links := r.links(t, tests)
	// The trajectory's commit carries the description in full, uncut.
	trajSHA, err := trajectoryCommit(ctx, mirror, pr, title, hideSecrets(Body(pr), cred))
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	links.Trajectory = r.cr.FileURL(r.info, trajSHA, FileTrajectory, 0)
	links.Attachments = "[the trajectory's commit](" + markdown.Dest(r.cr.TreeURL(r.info, trajSHA)) + ") (branch " + code(trajRef) + ")"
	body := hideSecrets(BodyWith(pr, links), cred)

	if err := push(ctx, mirror, cred.Env, t.Repo, trajSHA, "refs/heads/"+trajRef, true); err != nil {
		return "", fmt.Errorf("publish task %s: push the trajectory: %w", t.ID, err)
	}
	if url, err := g.pushBranch(ctx, r, mirror, cred.Env, t.Repo, fix, branch, trajRef, log); err != nil || url != "" {
		if err != nil {
			return "", fmt.Errorf("publish task %s: %w", t.ID, err)
		}
		return url, nil
	}

	// A patch no model reviewed opens as a draft, labelled so.
	draft := !task.Reviewed(pr.Gates)
	created, err := r.cr.OpenChangeRequest(ctx, r.id, forge.NewChangeRequest{Title: title, Head: branch, Base: r.base, Body: body, Draft: draft})
	if err != nil {
		// A create whose answer was lost, or a worker that won the race
		// after our push: its pull request is the group's.
		if errors.Is(err, forge.ErrExists) {
			if existing, lerr := r.openPull(ctx, branch); lerr == nil && existing != nil {
				log.Info("the group's pull request exists", zap.String("pull_request", existing.URL))
				return existing.URL, nil
			}
		}
		g.cleanup(ctx, r, branch, trajRef, log)
		return "", fmt.Errorf("publish task %s: open the pull request: %w", t.ID, err)
	}
	log = log.With(zap.String("pull_request", created.URL))
	labels := append([]string{Label}, pr.Labels...)
	if draft {
		labels = append(labels, UnreviewedLabel)
	}
	for _, l := range labels {
		if err := r.cr.AddLabel(ctx, r.id, created.Number, l); err != nil {
			log.Warn("label the pull request", zap.String("label", l), zap.Error(err))
		}
	}
	g.requestReviews(ctx, r, created, pr, mirror, tests, log)
	log.Info("pull request opened", zap.Bool("draft", draft), zap.String("commit", fix))
	return created.URL, nil
}

// pushBranch pushes fix to the group's branch. When the branch exists
// (another worker's pull request, being opened right now perhaps, or what
// a failed attempt left behind), it is taken over unless the group's pull
// request appears, whose page is then returned; a takeover refused because
// another push is taking it at the same moment is tried again.
func (g *Forge) pushBranch(ctx context.Context, r *forgeRepo, mirror gitrepo.Repo, env []string, remote, fix, branch, trajRef string, log *zap.Logger) (string, error) {
	err := push(ctx, mirror, env, remote, fix, "refs/heads/"+branch, false)
	if err == nil {
		return "", nil
	}
	if !errors.Is(err, errRejected) {
		g.cleanup(ctx, r, "", trajRef, log)
		return "", fmt.Errorf("push %s: %w", branch, err)
	}
	for attempt := 1; ; attempt++ {
		if existing, lerr := r.openPull(ctx, branch); lerr == nil && existing != nil {
			log.Info("lost the race: the group's pull request was opened meanwhile", zap.String("pull_request", existing.URL))
			g.cleanup(ctx, r, "", trajRef, log)
			return existing.URL, nil
		}
		err := push(ctx, mirror, env, remote, fix, "refs/heads/"+branch, true)
		if err == nil {
			return "", nil
		}
		if !errors.Is(err, errRejected) || attempt == takeoverAttempts {
			g.cleanup(ctx, r, "", trajRef, log)
			return "", fmt.Errorf("push %s: %w", branch, err)
		}
		select {
		case <-ctx.Done():
			g.cleanup(ctx, r, "", trajRef, log)
			return "", fmt.Errorf("push %s: %w", branch, ctx.Err())
		case <-time.After(time.Duration(attempt) * 250 * time.Millisecond):
		}
	}
}

// cleanup deletes what a failed publish pushed: the branch unless a pull
// request (open or closed) refers to it, and the trajectory's branch.
func (g *Forge) cleanup(ctx context.Context, r *forgeRepo, branch, trajRef string, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if branch != "" {
		pr, err := r.cr.FindChangeRequest(ctx, r.id, branch, false)
		switch {
		case err != nil:
			log.Warn("cannot tell whether a pull request refers to the branch: leaving it", zap.Error(err))
			branch = ""
		case pr != nil:
			log.Info("a pull request refers to the branch: leaving it", zap.String("pull_request", pr.URL))
			branch = ""
		}
	}
	for _, ref := range []string{branch, trajRef} {
		if ref == "" {
			continue
		}
		if err := r.cr.DeleteBranch(ctx, r.id, ref); err != nil {
			log.Warn("delete a branch left by a failed publish", zap.String("ref", ref), zap.Error(err))
		} else {
			log.Info("deleted a branch left by a failed publish", zap.String("ref", ref))
		}
	}
}

// takeoverAttempts bounds the pushes that try to take over a group's
// branch that other pushes keep moving.
const takeoverAttempts = 5

// errRejected is a push refused because the branch moved.
var errRejected = errors.New("the remote branch exists and differs")

// push sends sha to ref on remote with the credentials in env.
func push(ctx context.Context, repo gitrepo.Repo, env []string, remote, sha, ref string, force bool) error {
	spec := sha + ":" + ref
	if force {
		spec = "+" + spec
	}
	out, err := repo.GitWith(ctx, env, "push", "--porcelain", "--", remote, spec)
	if err != nil {
		// Refused because the branch is there (or being made by another
		// push at the same moment).
		for _, why := range []string{"[rejected]", "non-fast-forward", "fetch first", "cannot lock ref", "already exists"} {
			if !strings.Contains(out, why) {
				continue
			}
			return fmt.Errorf("push %s: %w", ref, errRejected)
		}
		return err
	}
	return nil
}

// trajectoryCommit makes a commit with no parent holding the attachments,
// in repo's object store, and returns it.
func trajectoryCommit(ctx context.Context, repo gitrepo.Repo, pr PullRequest, title, body string) (string, error) {
	tmp, err := os.MkdirTemp("", "redfix-trajectory-")
	if err != nil {
		return "", fmt.Errorf("trajectory commit: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := writeFiles(tmp, title, body, pr); err != nil {
		return "", fmt.Errorf("trajectory commit: %w", err)
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	for _, f := range []string{FileTrajectory, FilePatch, FileGates, FilePullRequest} {
		blob, err := repo.Git(ctx, "hash-object", "-w", "--no-filters", filepath.Join(tmp, f))
		if err != nil {
			return "", fmt.Errorf("trajectory commit: %w", err)
		}
		if _, err := repo.GitWith(ctx, env, "update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(blob)+","+f); err != nil {
			return "", fmt.Errorf("trajectory commit: %w", err)
		}
	}
	tree, err := repo.GitWith(ctx, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("trajectory commit: %w", err)
	}
	msg := fmt.Sprintf("redfix: trajectory of task %s\n\nThe agent's trajectory, patch, gates and pull request description for\n%q.\n\nRedfix-Task: %s\nRedfix-Fingerprint: %s\n", pr.Task.ID, title, pr.Task.ID, pr.Task.Fingerprint)
	sha, err := repo.Git(ctx, "commit-tree", strings.TrimSpace(tree), "-m", msg)
	if err != nil {
		return "", fmt.Errorf("trajectory commit: %w", err)
	}
	return strings.TrimSpace(sha), nil
}

// testFile is where a failing test is defined.
type testFile struct {
	path string
	line int
}

// testFiles finds each failing test's source at the task's commit: the
// file declaring its top-level test function, among the files of tests
// (tests), in the package's directory when several do.
func testFiles(ctx context.Context, repo gitrepo.Repo, tests TestFiles, t task.Task) map[string]testFile {
	out := map[string]testFile{}
	if tests == nil {
		return out
	}
	for _, f := range t.Failures {
		top, _, _ := strings.Cut(f.Test, "/")
		if top == "" || !regexp.MustCompile(`^\w+$`).MatchString(top) {
			continue
		}
		res, err := repo.Git(ctx, "grep", "-n", "-I", "-E", `^func \(?[A-Za-z_ *]*\)? ?`+top+`\(`, t.Commit)
		if err != nil {
			continue
		}
		var best testFile
		bestScore := -1
		for _, line := range strings.Split(strings.TrimSpace(res), "\n") {
			// commit:path:line:text
			parts := strings.SplitN(strings.TrimPrefix(line, t.Commit+":"), ":", 3)
			if len(parts) < 3 || !tests.IsTestFile(parts[0]) {
				continue
			}
			n, _ := strconv.Atoi(parts[1])
			score := 0
			if dir := filepath.Dir(parts[0]); dir != "." && strings.HasSuffix(f.Package, "/"+dir) || dir == "." {
				score = 1
			}
			if score > bestScore {
				best, bestScore = testFile{path: parts[0], line: n}, score
			}
		}
		if bestScore >= 0 {
			out[f.ID()] = best
		}
	}
	return out
}

// links are the body's links into the repository's pages on its forge.
func (r *forgeRepo) links(t task.Task, tests map[string]testFile) Links {
	return Links{
		Commit: func(sha string) string { return r.cr.CommitURL(r.info, sha) },
		Test: func(f task.Failure) string {
			tf, ok := tests[f.ID()]
			if !ok {
				return ""
			}
			return r.cr.FileURL(r.info, t.Commit, tf.path, tf.line)
		},
	}
}

// refSafe makes s usable as one component of a branch name.
func refSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
	if s == "" {
		return "unnamed"
	}
	return s
}
