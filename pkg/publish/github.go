package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gh"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// GitHubClients gives the client of a repository (gh.Clients).
type GitHubClients interface {
	ForRepo(ctx context.Context, owner, repo string) (*gh.Client, error)
}

// Mirrors gives a local bare mirror of a repository holding a commit
// (workspace.Mirrors).
type Mirrors interface {
	Mirror(ctx context.Context, src, commit string) (gitrepo.Repo, error)
}

// Label is put on every pull request redfix opens.
const Label = "redfix"

// TrajectoryRefPrefix is where the trajectories are pushed: one branch per
// task, refs/heads/redfix-trajectories/<group>/<task>, holding a single
// commit (no parent, not the pull request's branch) with trajectory.jsonl,
// patch.diff, gates.json and pull_request.md.
const TrajectoryRefPrefix = "redfix-trajectories/"

// GitHub publishes pull requests on GitHub: the patch is committed in the
// repository's mirror and pushed to Branch(task) with the installation's
// token (given to git per command), the trajectory to a branch of its own,
// and the pull request opened, labelled and given reviewers through the API.
// A group's open pull request, found by its head branch, is reported instead
// of opening another.
type GitHub struct {
	Clients GitHubClients
	Mirrors Mirrors
	Log     *zap.Logger
}

// NewGitHub returns a GitHub publisher.
func NewGitHub(clients GitHubClients, mirrors Mirrors, log *zap.Logger) *GitHub {
	if log == nil {
		log = zap.NewNop()
	}
	return &GitHub{Clients: clients, Mirrors: mirrors, Log: log}
}

// ghRepo is the repository a publish works on.
type ghRepo struct {
	owner, name string
	client      *gh.Client
	htmlURL     string
	base        string // the pull request's base branch
}

// Publish pushes the fix and opens its pull request, or reports the group's
// open pull request. It returns the pull request's page.
func (g *GitHub) Publish(ctx context.Context, pr PullRequest) (string, error) {
	t := pr.Task
	branch := Branch(t)
	log := g.Log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo), zap.String("fingerprint", t.Fingerprint), zap.String("branch", branch))
	owner, name, err := gh.ParseRepo(t.Repo)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	client, err := g.Clients.ForRepo(ctx, owner, name)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	r := &ghRepo{owner: owner, name: name, client: client}

	if existing, err := r.openPull(ctx, branch); err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	} else if existing != nil {
		log.Info("the group has an open pull request: not opening another", zap.String("pull_request", existing.GetHTMLURL()))
		return existing.GetHTMLURL(), nil
	}
	info, _, err := client.Repositories.Get(ctx, owner, name)
	if err != nil {
		return "", fmt.Errorf("publish task %s: read %s/%s: %w", t.ID, owner, name, err)
	}
	r.htmlURL = strings.TrimSuffix(info.GetHTMLURL(), "/")
	r.base = t.Branch
	if r.base == "" {
		r.base = info.GetDefaultBranch()
	}

	mirror, err := g.Mirrors.Mirror(ctx, t.Repo, t.Commit)
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	token, err := client.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("publish task %s: token: %w", t.ID, err)
	}
	secrets := []string{token}
	pr.Summary = hideSecrets(pr.Summary, secrets)
	pr.Trajectory = []byte(hideSecrets(string(pr.Trajectory), secrets))
	pr.Task.Failures = redactFailures(pr.Task.Failures, secrets)

	title := hideSecrets(Title(pr), secrets)
	fix, err := commitPatch(ctx, mirror, t.Commit, pr.Patch, commitMessage(title, pr))
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	trajRef := TrajectoryRefPrefix + strings.TrimPrefix(branch, "redfix/") + "/" + refSafe(t.ID)
	tests := g.testFiles(ctx, mirror, t)
	links := r.links(t, tests)
	// The trajectory's commit carries the description in full, uncut.
	trajSHA, err := trajectoryCommit(ctx, mirror, pr, title, hideSecrets(Body(pr), secrets))
	if err != nil {
		return "", fmt.Errorf("publish task %s: %w", t.ID, err)
	}
	links.Trajectory = r.htmlURL + "/blob/" + trajSHA + "/" + FileTrajectory
	links.Attachments = "[the trajectory's commit](" + markdown.Dest(r.htmlURL+"/tree/"+trajSHA) + ") (branch " + code(trajRef) + ")"
	body := hideSecrets(BodyWith(pr, links), secrets)

	env := gh.GitAuthEnv(token)
	if err := push(ctx, mirror, env, t.Repo, trajSHA, "refs/heads/"+trajRef, true); err != nil {
		return "", fmt.Errorf("publish task %s: push the trajectory: %w", t.ID, err)
	}
	pushedBranch := false
	if err := push(ctx, mirror, env, t.Repo, fix, "refs/heads/"+branch, false); err != nil {
		if !errors.Is(err, errRejected) {
			g.cleanup(ctx, r, "", trajRef, log)
			return "", fmt.Errorf("publish task %s: push %s: %w", t.ID, branch, err)
		}
		// The branch exists: another worker's pull request (being opened
		// right now, perhaps), or what a failed attempt left behind. The
		// branch is taken over unless the group's pull request appears; a
		// takeover refused because another push is taking it at the same
		// moment is tried again.
		for attempt := 1; ; attempt++ {
			if existing, lerr := r.openPull(ctx, branch); lerr == nil && existing != nil {
				log.Info("lost the race: the group's pull request was opened meanwhile", zap.String("pull_request", existing.GetHTMLURL()))
				g.cleanup(ctx, r, "", trajRef, log)
				return existing.GetHTMLURL(), nil
			}
			err := push(ctx, mirror, env, t.Repo, fix, "refs/heads/"+branch, true)
			if err == nil {
				break
			}
			if !errors.Is(err, errRejected) || attempt == takeoverAttempts {
				g.cleanup(ctx, r, "", trajRef, log)
				return "", fmt.Errorf("publish task %s: push %s: %w", t.ID, branch, err)
			}
			select {
			case <-ctx.Done():
				g.cleanup(ctx, r, "", trajRef, log)
				return "", fmt.Errorf("publish task %s: push %s: %w", t.ID, branch, ctx.Err())
			case <-time.After(time.Duration(attempt) * 250 * time.Millisecond):
			}
		}
	}
	pushedBranch = true

	draft := judgeDidNotRun(pr.Gates)
	created, resp, err := client.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{
		Title: github.String(title), Head: github.String(branch), Base: github.String(r.base),
		Body: github.String(body), Draft: github.Bool(draft), MaintainerCanModify: github.Bool(true),
	})
	if err != nil {
		// A create whose answer was lost, or a worker that won the race
		// after our push: its pull request is the group's.
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			if existing, lerr := r.openPull(ctx, branch); lerr == nil && existing != nil {
				log.Info("the group's pull request exists", zap.String("pull_request", existing.GetHTMLURL()))
				return existing.GetHTMLURL(), nil
			}
		}
		if pushedBranch {
			g.cleanup(ctx, r, branch, trajRef, log)
		}
		return "", fmt.Errorf("publish task %s: open the pull request: %w", t.ID, err)
	}
	prURL := created.GetHTMLURL()
	log = log.With(zap.String("pull_request", prURL))
	for _, l := range append([]string{Label}, pr.Labels...) {
		if err := addLabel(ctx, client, owner, name, created.GetNumber(), l); err != nil {
			log.Warn("label the pull request", zap.String("label", l), zap.Error(err))
		}
	}
	g.requestReviews(ctx, r, created, pr, mirror, tests, log)
	log.Info("pull request opened", zap.Bool("draft", draft), zap.String("commit", fix))
	return prURL, nil
}

// addLabel labels an issue or pull request, in the form GitHub documents
// ({"labels": [...]}; go-github sends a bare array).
func addLabel(ctx context.Context, client *gh.Client, owner, name string, number int, label string) error {
	req, err := client.NewRequest("POST", fmt.Sprintf("repos/%s/%s/issues/%d/labels", owner, name, number), map[string][]string{"labels": {label}})
	if err != nil {
		return err
	}
	_, err = client.Do(ctx, req, nil)
	return err
}

// openPull is the open pull request from branch, or nil.
func (r *ghRepo) openPull(ctx context.Context, branch string) (*github.PullRequest, error) {
	prs, _, err := r.client.PullRequests.List(ctx, r.owner, r.name, &github.PullRequestListOptions{
		State: "open", Head: r.owner + ":" + branch, ListOptions: github.ListOptions{PerPage: 10},
	})
	if err != nil {
		return nil, fmt.Errorf("look up the pull request of %s: %w", branch, err)
	}
	for _, p := range prs {
		if p.GetHead().GetRef() == branch {
			return p, nil
		}
	}
	return nil, nil
}

// cleanup deletes what a failed publish pushed: the branch unless a pull
// request (open or closed) refers to it, and the trajectory's branch.
func (g *GitHub) cleanup(ctx context.Context, r *ghRepo, branch, trajRef string, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if branch != "" {
		prs, _, err := r.client.PullRequests.List(ctx, r.owner, r.name, &github.PullRequestListOptions{
			State: "all", Head: r.owner + ":" + branch, ListOptions: github.ListOptions{PerPage: 10},
		})
		switch {
		case err != nil:
			log.Warn("cannot tell whether a pull request refers to the branch: leaving it", zap.Error(err))
			branch = ""
		case len(prs) > 0:
			log.Info("a pull request refers to the branch: leaving it", zap.String("pull_request", prs[0].GetHTMLURL()))
			branch = ""
		}
	}
	for _, ref := range []string{branch, trajRef} {
		if ref == "" {
			continue
		}
		if _, err := r.client.Git.DeleteRef(ctx, r.owner, r.name, "heads/"+ref); err != nil {
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
// file declaring its top-level test function, in the package's directory
// when several do.
func (g *GitHub) testFiles(ctx context.Context, repo gitrepo.Repo, t task.Task) map[string]testFile {
	out := map[string]testFile{}
	for _, f := range t.Failures {
		top, _, _ := strings.Cut(f.Test, "/")
		if top == "" || !regexp.MustCompile(`^\w+$`).MatchString(top) {
			continue
		}
		res, err := repo.Git(ctx, "grep", "-n", "-E", `^func \(?[A-Za-z_ *]*\)? ?`+top+`\(`, t.Commit, "--", "*_test.go", "*.py", "*.java", "*.js", "*.ts")
		if err != nil {
			continue
		}
		var best testFile
		bestScore := -1
		for _, line := range strings.Split(strings.TrimSpace(res), "\n") {
			// commit:path:line:text
			parts := strings.SplitN(strings.TrimPrefix(line, t.Commit+":"), ":", 3)
			if len(parts) < 3 {
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

// links are the body's links into the repository on GitHub.
func (r *ghRepo) links(t task.Task, tests map[string]testFile) Links {
	return Links{
		Commit: func(sha string) string { return r.htmlURL + "/commit/" + sha },
		Test: func(f task.Failure) string {
			tf, ok := tests[f.ID()]
			if !ok {
				return ""
			}
			return fmt.Sprintf("%s/blob/%s/%s#L%d", r.htmlURL, url.PathEscape(t.Commit), pathEscape(tf.path), tf.line)
		},
	}
}

// pathEscape escapes each segment of a slash-separated path for a URL.
func pathEscape(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// requestReviews asks the blame commit's author (when GitHub knows them),
// the failing tests' code owners and the reviewers the repository's
// .redfix.yaml names for a review. A reviewer GitHub
// refuses (not a collaborator, the author) is logged and skipped.
func (g *GitHub) requestReviews(ctx context.Context, r *ghRepo, created *github.PullRequest, pr PullRequest, mirror gitrepo.Repo, tests map[string]testFile, log *zap.Logger) {
	author := strings.ToLower(created.GetUser().GetLogin())
	var users, teams []string
	add := func(list *[]string, v string) {
		for _, x := range *list {
			if strings.EqualFold(x, v) {
				return
			}
		}
		*list = append(*list, v)
	}
	if blame := pr.Task.Bisection.Blame; blame != "" {
		c, _, err := r.client.Repositories.GetCommit(ctx, r.owner, r.name, blame, nil)
		switch {
		case err != nil:
			log.Warn("look up the blame commit's author", zap.Error(err))
		case c.GetAuthor() != nil && c.GetAuthor().GetLogin() != "" && c.GetAuthor().GetType() != "Bot":
			add(&users, c.GetAuthor().GetLogin())
		default:
			log.Info("the blame commit's author is not a GitHub user: no review requested from them")
		}
	}
	if co, ok := codeOwners(ctx, mirror, pr.Task.Commit); ok {
		for _, tf := range tests {
			for _, o := range co.Owners(tf.path) {
				o = strings.TrimPrefix(o, "@")
				if strings.Contains(o, "@") || o == "" {
					continue // an e-mail address: GitHub has no request for it
				}
				if org, team, isTeam := strings.Cut(o, "/"); isTeam {
					if strings.EqualFold(org, r.owner) {
						add(&teams, team)
					}
					continue
				}
				add(&users, o)
			}
		}
	}
	for _, rv := range pr.Reviewers { // the repository's own (.redfix.yaml)
		if org, team, isTeam := strings.Cut(rv, "/"); isTeam {
			if strings.EqualFold(org, r.owner) {
				add(&teams, team)
			}
			continue
		}
		add(&users, rv)
	}
	var reviewers []string
	for _, u := range users {
		if strings.ToLower(u) != author {
			reviewers = append(reviewers, u)
		}
	}
	if len(reviewers) == 0 && len(teams) == 0 {
		return
	}
	req := github.ReviewersRequest{Reviewers: reviewers, TeamReviewers: teams}
	if _, _, err := r.client.PullRequests.RequestReviewers(ctx, r.owner, r.name, created.GetNumber(), req); err == nil {
		log.Info("reviews requested", zap.Strings("reviewers", reviewers), zap.Strings("teams", teams))
		return
	}
	// One refused reviewer fails the whole request: ask each alone.
	for _, u := range reviewers {
		if _, _, err := r.client.PullRequests.RequestReviewers(ctx, r.owner, r.name, created.GetNumber(), github.ReviewersRequest{Reviewers: []string{u}}); err != nil {
			log.Info("review not requested", zap.String("reviewer", u), zap.Error(err))
		}
	}
	for _, tm := range teams {
		if _, _, err := r.client.PullRequests.RequestReviewers(ctx, r.owner, r.name, created.GetNumber(), github.ReviewersRequest{TeamReviewers: []string{tm}}); err != nil {
			log.Info("review not requested", zap.String("team", tm), zap.Error(err))
		}
	}
}

// codeOwners reads the repository's CODEOWNERS at commit, where GitHub
// looks for it.
func codeOwners(ctx context.Context, repo gitrepo.Repo, commit string) (CodeOwners, bool) {
	for _, p := range []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"} {
		if data, err := repo.Git(ctx, "show", commit+":"+p); err == nil {
			return ParseCodeOwners(data), true
		}
	}
	return CodeOwners{}, false
}

// judgeDidNotRun reports a judge gate that is not a pass: the pull request
// is then a draft.
func judgeDidNotRun(gates []task.Gate) bool {
	for _, g := range gates {
		if g.Name == "judge" {
			return g.Verdict != task.GatePass
		}
	}
	return true
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

// tokenPattern matches GitHub's token formats.
var tokenPattern = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`)

// hideSecrets hides the given secrets and anything shaped like a GitHub token.
func hideSecrets(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 8 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return tokenPattern.ReplaceAllString(s, "[redacted]")
}

func redactFailures(fs []task.Failure, secrets []string) []task.Failure {
	out := make([]task.Failure, len(fs))
	for i, f := range fs {
		f.Message = hideSecrets(f.Message, secrets)
		f.Output = hideSecrets(f.Output, secrets)
		out[i] = f
	}
	return out
}
