package command

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/markdown"
	"github.com/redfix/redfix/pkg/task"
)

// Forge is what the commands ask of the forge the comments and reviews
// come from (its driver): answers in a thread, the mark that a command was
// heard, who may write (the forge's answer, never the comment's), a change
// request read and closed, and redfix's open change requests listed.
type Forge interface {
	Comment(ctx context.Context, repo forge.RepoID, number int, body string) (string, error)
	Acknowledge(ctx context.Context, c forge.Comment) error
	Permission(ctx context.Context, repo forge.RepoID, user string) (forge.Permission, error)
	ChangeRequest(ctx context.Context, repo forge.RepoID, number int) (forge.ChangeRequest, error)
	CloseChangeRequest(ctx context.Context, repo forge.RepoID, number int) error
	OpenChangeRequests(ctx context.Context, repo forge.RepoID, l forge.Listing) ([]forge.ChangeRequest, error)
}

// State is what the commands read and keep (store.Store).
type State interface {
	GetFix(ctx context.Context, repo string, number int) (task.Fix, error)
	GetTask(ctx context.Context, id string) (task.Task, error)
	SaveTask(ctx context.Context, t task.Task) error
	ClaimRevision(ctx context.Context, repo string, number, max int) (int, bool, error)
	NextRetry(ctx context.Context, fingerprint string) (int, error)
	ForgetPublished(ctx context.Context, fingerprint, url string) (bool, error)
	RecordCommand(ctx context.Context, c task.Command) error
}

// Jobs queues repairs and revisions (queue.Queue).
type Jobs interface {
	Enqueue(ctx context.Context, j job.Job) (duplicate bool, err error)
}

// Reverter opens the pull request that reverts the commit that broke a
// failure group, and returns its address.
type Reverter interface {
	OpenRevert(ctx context.Context, repo forge.RepoID, group string) (url string, err error)
}

// Admitter holds a retry to the rules triage holds a fresh failure to
// (triage.Triage): the opt-outs, forks, the limit of open pull requests and
// the daily job budget. refused says why not, in words for the thread; a
// retry let through has taken one of the day's jobs, which giveBack
// returns if it is not queued.
type Admitter interface {
	AdmitRetry(ctx context.Context, t task.Task) (refused string, giveBack func(), err error)
}

// Handler acts on commands and reviews, as a forge's events bring them.
type Handler struct {
	Forge Forge
	State State
	Jobs  Jobs
	// Reverter opens reverts; nil answers that reverts are not available.
	Reverter Reverter
	// Admit, when set, holds retries to triage's rules: a retry they
	// refuse is answered with why, and nothing is queued.
	Admit Admitter
	// MaxRevisions bounds the revisions of one pull request.
	MaxRevisions int
	// Self is the bot's own login where its comments do not come from an
	// account the forge marks as a bot (a plain token's user).
	Self string
	Log  *zap.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// fromBot reports a comment or review by a bot, or by redfix itself:
// never acted on, so that no two bots talk in a loop.
func (h *Handler) fromBot(u forge.User) bool {
	return u.Bot || h.Self != "" && strings.EqualFold(u.Login, h.Self)
}

// request is one command being acted on. Its repository's fixes and
// commands are kept under its path on the forge (name, "owner/name").
type request struct {
	repo   forge.RepoID
	name   string
	number int
	user   string
	cmd    Command
	fix    task.Fix
	log    *zap.Logger
}

// Comment acts on a comment that starts with /redfix.
func (h *Handler) Comment(ctx context.Context, c forge.Comment) (string, error) {
	r := &request{repo: c.Repo, name: c.Repo.Path, number: c.Number, user: c.Author.Login}
	r.log = h.Log.With(zap.String("repo", r.name), zap.Int("pull_request", r.number), zap.String("user", r.user))
	if h.fromBot(c.Author) {
		return "ignored: a bot's comment", nil
	}
	cmd, ok := Parse(c.Body)
	if !ok {
		r.log.Info("comment ignored: not a command redfix knows")
		return "ignored: not a known command", nil
	}
	r.cmd = cmd
	r.log = r.log.With(zap.String("command", cmd.Verb))
	fix, err := h.State.GetFix(ctx, r.name, r.number)
	if errors.Is(err, task.ErrNoFix) {
		// Someone else's pull request, or an issue: not redfix's to act on.
		return h.elsewhere(ctx, r, c.OnChangeRequest)
	}
	if err != nil {
		return "", err
	}
	r.fix = fix
	if ok, err := h.allowed(ctx, r); err != nil || !ok {
		if err != nil {
			return "", err
		}
		return "refused: " + r.user + " may not write to " + r.name, nil
	}
	// Heard: acknowledged on the comment, before the work.
	if err := h.Forge.Acknowledge(ctx, c); err != nil {
		r.log.Warn("react to the command", zap.Error(err))
	}
	var note string
	switch cmd.Verb {
	case Retry:
		note, err = h.retry(ctx, r)
	case Revise:
		note, err = h.revise(ctx, r)
	case Revert:
		note, err = h.revert(ctx, r)
	case Close:
		note, err = h.close(ctx, r)
	case Explain:
		note, err = h.explain(ctx, r)
	}
	if err != nil {
		return "", fmt.Errorf("command %s on %s#%d: %w", cmd.Verb, r.name, r.number, err)
	}
	h.record(ctx, r, note)
	r.log.Info("command done", zap.String("result", note))
	return note, nil
}

// Reviewed acts on a review of one of redfix's pull requests: one that
// requests changes, by someone who may write to the repository, is a
// revision with the review's words.
func (h *Handler) Reviewed(ctx context.Context, rv forge.Review) (string, error) {
	if rv.State != forge.ReviewChangesRequested {
		return "no revision: the review requests no change", nil
	}
	r := &request{repo: rv.Repo, name: rv.Repo.Path, number: rv.Number, user: rv.Author.Login, cmd: Command{Verb: Revise, What: strings.TrimSpace(rv.Body)}}
	r.log = h.Log.With(zap.String("repo", r.name), zap.Int("pull_request", r.number), zap.String("user", r.user), zap.String("command", "review"))
	if h.fromBot(rv.Author) {
		return "ignored: a bot's review", nil
	}
	fix, err := h.State.GetFix(ctx, r.name, r.number)
	if errors.Is(err, task.ErrNoFix) {
		return "ignored: not redfix's pull request", nil
	}
	if err != nil {
		return "", err
	}
	r.fix = fix
	perm, err := h.Forge.Permission(ctx, r.repo, r.user)
	if err != nil {
		return "", err
	}
	if !perm.Write {
		// A review is no command: no reply, but the log says why.
		r.log.Warn("review requesting changes ignored: the reviewer may not write to the repository", zap.String("permission", perm.Level))
		return "ignored: the reviewer may not write", nil
	}
	if r.cmd.What == "" {
		_, err := h.Forge.Comment(ctx, r.repo, r.number, fmt.Sprintf("@%s requested changes without saying what. Write `/redfix revise <what to change>` and a worker will revise this pull request.", r.user))
		return "no revision: the review says nothing", err
	}
	note, err := h.revise(ctx, r)
	if err != nil {
		return "", fmt.Errorf("revise %s#%d: %w", r.name, r.number, err)
	}
	h.record(ctx, r, note)
	return note, nil
}

// allowed checks the commenter's permission with the forge; one who may
// not write gets a polite refusal, and the log a line.
func (h *Handler) allowed(ctx context.Context, r *request) (bool, error) {
	perm, err := h.Forge.Permission(ctx, r.repo, r.user)
	if err != nil {
		return false, err
	}
	if perm.Write {
		return true, nil
	}
	r.log.Warn("command refused: the user may not write to the repository", zap.String("permission", perm.Level), zap.String("role", perm.Role))
	body := fmt.Sprintf("Sorry @%s, only people who may write to this repository can give redfix commands. A maintainer can give it instead.", r.user)
	if _, err := h.Forge.Comment(ctx, r.repo, r.number, body); err != nil {
		return false, err
	}
	h.record(ctx, r, "refused")
	return false, nil
}

// record keeps what was done; a failure to keep it is logged.
func (h *Handler) record(ctx context.Context, r *request, result string) {
	err := h.State.RecordCommand(ctx, task.Command{Repo: r.name, Number: r.number, Verb: r.cmd.Verb, User: r.user, Result: result, At: h.now().UTC()})
	if err != nil {
		r.log.Warn("record the command", zap.Error(err))
	}
}

func (h *Handler) reply(ctx context.Context, r *request, body string) error {
	_, err := h.Forge.Comment(ctx, r.repo, r.number, body)
	return err
}

// retry queues the group's repair again, from the task triage made, with
// a job ID of its own. While the pull request is open there is nothing to
// retry: it is revised or closed first.
func (h *Handler) retry(ctx context.Context, r *request) (string, error) {
	if r.fix.State == task.FixOpen {
		return "not retried: the pull request is open", h.reply(ctx, r, "This pull request is still open, so there is nothing to retry. `/redfix revise <what>` changes it; `/redfix close` closes it, and `/redfix retry` then starts the repair over.")
	}
	if r.fix.Landed() {
		return "not retried: the pull request landed", h.reply(ctx, r, "This pull request landed: there is nothing to retry.")
	}
	t, err := h.State.GetTask(ctx, r.fix.TaskID)
	if err != nil {
		return "", err
	}
	giveBack := func() {}
	if h.Admit != nil {
		refused, back, err := h.Admit.AdmitRetry(ctx, t)
		if err != nil {
			return "", err
		}
		if refused != "" {
			r.log.Info("retry refused by triage's rules", zap.String("reason", refused))
			return "not retried: " + refused, h.reply(ctx, r, "Not retrying: "+markdown.Text(refused)+". A new failure of the same tests would be held to the same rule.")
		}
		giveBack = back
	}
	queued := false
	defer func() {
		if !queued {
			giveBack()
		}
	}()
	if _, err := h.State.ForgetPublished(ctx, t.Fingerprint, r.fix.URL); err != nil {
		return "", err
	}
	n, err := h.State.NextRetry(ctx, t.Fingerprint)
	if err != nil {
		return "", err
	}
	nt := again(t, fmt.Sprintf("%s-retry-%d", t.ID, n), fmt.Sprintf("retry %d, asked for by %s on %s#%d", n, r.user, r.name, r.number), h.now())
	if err := h.State.SaveTask(ctx, nt); err != nil {
		return "", err
	}
	if _, err := h.Jobs.Enqueue(ctx, job.Job{ID: job.RetryID(t.Fingerprint, n), Task: nt}); err != nil {
		return "", err
	}
	queued = true
	return fmt.Sprintf("retry %d queued", n), h.reply(ctx, r, fmt.Sprintf("Retrying the repair (retry %d, task %s). A new pull request follows if a patch passes the gates.", n, markdown.Code(nt.ID)))
}

// again is t as a new task with id, queued for reason.
func again(t task.Task, id, reason string, now time.Time) task.Task {
	t.ID, t.Status, t.Reason = id, task.StatusQueued, reason
	t.PullRequest, t.Rounds, t.Spend = "", nil, nil
	t.CreatedAt, t.UpdatedAt = now.UTC(), now.UTC()
	return t
}

// revise queues a revision of the pull request with the reviewer's words,
// within the bound of revisions per pull request.
func (h *Handler) revise(ctx context.Context, r *request) (string, error) {
	if r.fix.State != task.FixOpen {
		return "not revised: the pull request is closed", h.reply(ctx, r, "This pull request is closed: there is nothing to revise.")
	}
	pr, err := h.Forge.ChangeRequest(ctx, r.repo, r.number)
	if err != nil {
		return "", err
	}
	if pr.State != forge.StateOpen {
		return "not revised: the pull request is closed", h.reply(ctx, r, "This pull request is closed: there is nothing to revise.")
	}
	t, err := h.State.GetTask(ctx, r.fix.TaskID)
	if err != nil {
		return "", err
	}
	n, ok, err := h.State.ClaimRevision(ctx, r.name, r.number, h.MaxRevisions)
	if err != nil {
		return "", err
	}
	if !ok {
		return "not revised: the bound is reached", h.reply(ctx, r, fmt.Sprintf("This pull request has had %d of at most %d revisions (`review.max_revisions`), so redfix will not revise it again. Push the change yourself, or close it.", n, h.MaxRevisions))
	}
	rev := &job.Revision{
		Repo: r.name, Number: r.number, Branch: pr.Head, Head: pr.HeadSHA,
		Request: r.cmd.What, Reviewer: r.user, N: n,
	}
	nt := again(t, fmt.Sprintf("%s-revision-%d", t.ID, n), fmt.Sprintf("revision %d of %s#%d, asked for by %s", n, r.name, r.number, r.user), h.now())
	nt.PullRequest = r.fix.URL
	if err := h.State.SaveTask(ctx, nt); err != nil {
		return "", err
	}
	if _, err := h.Jobs.Enqueue(ctx, job.Job{ID: job.RevisionID(t.Fingerprint, r.number, n), Task: nt, Revision: rev}); err != nil {
		return "", err
	}
	return fmt.Sprintf("revision %d queued", n), h.reply(ctx, r, fmt.Sprintf("Revising this pull request (revision %d of at most %d). A worker continues from %s with @%s's words; a new commit follows here if the change passes the gates and the judge again.", n, h.MaxRevisions, markdown.Code(abbrev(rev.Head)), r.user))
}

// revert asks the Reverter for the revert of the group's culprit.
func (h *Handler) revert(ctx context.Context, r *request) (string, error) {
	if h.Reverter == nil {
		return "not reverted: reverts are not available", h.reply(ctx, r, "Reverts are not available here: redfix cannot open one for this failure.")
	}
	url, err := h.Reverter.OpenRevert(ctx, r.repo, r.fix.Fingerprint)
	if err != nil {
		r.log.Warn("open the revert", zap.Error(err))
		return "not reverted", h.reply(ctx, r, "redfix could not open the revert: "+markdown.Text(err.Error()))
	}
	return "revert opened", h.reply(ctx, r, "The revert: ["+markdown.Text(url)+"]("+markdown.Dest(url)+")")
}

// close closes the pull request with a comment saying who asked; the
// pull_request webhook then records its outcome.
func (h *Handler) close(ctx context.Context, r *request) (string, error) {
	pr, err := h.Forge.ChangeRequest(ctx, r.repo, r.number)
	if err != nil {
		return "", err
	}
	if pr.State != forge.StateOpen {
		return "not closed: already closed", h.reply(ctx, r, "This pull request is already closed.")
	}
	if err := h.reply(ctx, r, fmt.Sprintf("Closing this pull request, as @%s asked.", r.user)); err != nil {
		return "", err
	}
	if err := h.Forge.CloseChangeRequest(ctx, r.repo, r.number); err != nil {
		return "", err
	}
	return "closed", nil
}

// explain answers with the triage evidence and the gates' verdicts kept
// with the task.
func (h *Handler) explain(ctx context.Context, r *request) (string, error) {
	t, err := h.State.GetTask(ctx, r.fix.TaskID)
	if err != nil {
		return "", err
	}
	return "explained", h.reply(ctx, r, Explanation(t))
}

// maxListed bounds the pull requests an answer on an issue lists.
const maxListed = 20

// elsewhere answers a command given on an issue or on a pull request that
// is not redfix's: to someone who may write to the repository, that the
// commands act on redfix's pull requests, with those open in the
// repository as links; to anyone else, nothing (a log line), as a command
// there would do nothing either.
func (h *Handler) elsewhere(ctx context.Context, r *request, pull bool) (string, error) {
	where := "an issue"
	if pull {
		where = "a pull request redfix did not open"
	}
	perm, err := h.Forge.Permission(ctx, r.repo, r.user)
	if err != nil {
		return "", err
	}
	if !perm.Write {
		r.log.Info("command ignored: not on one of redfix's pull requests, and the user may not write to the repository", zap.String("on", where), zap.String("permission", perm.Level))
		return "ignored: not redfix's pull request", nil
	}
	prs, err := h.Forge.OpenChangeRequests(ctx, r.repo, forge.Listing{HeadPrefix: forge.BranchPrefix, Limit: maxListed + 1})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@%s, redfix's commands act on the pull requests redfix opened: give `/redfix %s` in one of them. ", r.user, r.cmd.Verb)
	switch {
	case len(prs) == 0:
		b.WriteString("redfix has no open pull request in this repository.\n")
	default:
		b.WriteString("Its open pull requests here:\n\n")
		for i, pr := range prs {
			if i == maxListed {
				fmt.Fprintf(&b, "- and more: these are the newest %d\n", maxListed)
				break
			}
			fmt.Fprintf(&b, "- [#%d %s](%s)\n", pr.Number, markdown.Text(pr.Title), markdown.Dest(pr.URL))
		}
	}
	if err := h.reply(ctx, r, b.String()); err != nil {
		return "", err
	}
	note := fmt.Sprintf("answered: on %s (%d of redfix's pull requests listed)", where, min(len(prs), maxListed))
	h.record(ctx, r, note)
	r.log.Info("command answered: not on one of redfix's pull requests", zap.String("on", where), zap.Int("listed", min(len(prs), maxListed)))
	return note, nil
}
