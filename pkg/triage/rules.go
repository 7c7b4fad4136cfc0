package triage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// JobBudget counts each repository's jobs per UTC day; store.Store
// satisfies it. Without it, daily budgets are not enforced.
type JobBudget interface {
	// TakeDailyJob counts one job for repo on day unless limit are
	// counted already.
	TakeDailyJob(ctx context.Context, repo string, day time.Time, limit int) (taken bool, used int, err error)
	// ReturnDailyJob gives back a job taken on day that was not queued.
	ReturnDailyJob(ctx context.Context, repo string, day time.Time) error
	DailyJobs(ctx context.Context, repo string, day time.Time) (int, error)
}

// dailyLimit is repo's daily job budget: its own, else the default; 0 is
// no limit.
func (t *Triage) dailyLimit(repo string) int {
	r := normalizeRepo(repo)
	for k, n := range t.cfg.DailyJobsByRepo {
		if normalizeRepo(k) == r {
			return n
		}
	}
	return t.cfg.DailyJobs
}

func budgetReason(repo string, limit int, day time.Time) string {
	return fmt.Sprintf("daily job budget of %s used up: %d jobs queued on %s (UTC)", repo, limit, day.UTC().Format(time.DateOnly))
}

// budgetSpent says, before any work, why repo's budget for today leaves no
// room ("" when it does, or when no budget applies).
func (t *Triage) budgetSpent(ctx context.Context, repo string, limit int) (string, error) {
	b, ok := t.store.(JobBudget)
	if limit <= 0 || !ok {
		return "", nil
	}
	now := t.now()
	used, err := b.DailyJobs(ctx, normalizeRepo(repo), now)
	if err != nil {
		return "", err
	}
	if used >= limit {
		return budgetReason(repo, limit, now), nil
	}
	return "", nil
}

// takeBudget takes one of repo's jobs of the day for a job about to be
// queued; reason is why not. giveBack returns it if queueing fails.
func (t *Triage) takeBudget(ctx context.Context, repo string, limit int, tk *task.Task, log *zap.Logger) (reason string, giveBack func(), err error) {
	b, ok := t.store.(JobBudget)
	if limit <= 0 || !ok {
		return "", func() {}, nil
	}
	day, key := t.now(), normalizeRepo(repo)
	taken, used, err := b.TakeDailyJob(ctx, key, day, limit)
	if err != nil {
		return "", nil, err
	}
	if !taken {
		reason := budgetReason(repo, limit, day)
		addRule(tk, RuleBudget, task.RuleDrop, reason)
		return reason, nil, nil
	}
	log.Info("daily job budget", zap.Int("used", used), zap.Int("limit", limit))
	addRule(tk, RuleBudget, task.RulePass, fmt.Sprintf("job %d of %d on %s (UTC)", used, limit, day.UTC().Format(time.DateOnly)))
	return "", func() {
		if err := b.ReturnDailyJob(context.WithoutCancel(ctx), key, day); err != nil {
			log.Error("return a job to the daily budget", zap.Error(err))
		}
	}, nil
}

// DefaultHeads says where a repository's default branch is now;
// workspace.Mirrors satisfies it (and fetches the head into the mirror the
// workspaces share).
type DefaultHeads interface {
	DefaultHead(ctx context.Context, repo string) (branch, commit string, err error)
}

// lsRemoteHeads asks the repository itself, without credentials: for local
// paths and public remotes.
type lsRemoteHeads struct{}

func (lsRemoteHeads) DefaultHead(ctx context.Context, repo string) (string, string, error) {
	return workspace.DefaultHead(ctx, repo, nil)
}

// defaultHead is the repository's default branch and its head, asked once
// per report; ok is false when it cannot be known (the rule is then not
// checked, and the reason logged).
func (p *process) defaultHead(ctx context.Context, log *zap.Logger) (branch, commit string, ok bool) {
	if !p.headAsked {
		p.headAsked = true
		p.headBranch, p.headCommit, p.headErr = p.t.heads.DefaultHead(ctx, p.in.Repo)
		if p.headErr != nil {
			log.Warn("default branch not checked: its head is unknown", zap.Error(p.headErr))
		}
	}
	return p.headBranch, p.headCommit, p.headErr == nil
}

// fixedAtHead checks the failure at the head of the default branch, when
// that head comes after the failing commit: passes says, with a detail for
// people, whether the failure is gone there. The checkout at dir is left at
// the failing commit.
func (p *process) fixedAtHead(ctx context.Context, repo gitrepo.Repo, tk *task.Task, log *zap.Logger, passes func() (bool, string, error)) (reason string, err error) {
	commit := tk.Commit
	note := func(verdict, detail string) { addRule(tk, RuleDefaultBranch, verdict, detail) }
	branch, head, ok := p.defaultHead(ctx, log)
	switch {
	case !ok:
		note(task.RuleNotChecked, "its head is unknown: "+p.headErr.Error())
		return "", nil
	case head == commit:
		note(task.RulePass, "the failing commit is its head")
		return "", nil
	}
	if branch == "" {
		branch = "the default branch"
	}
	if _, err := repo.Resolve(ctx, head); err != nil {
		// A head newer than the workspace's clone.
		if _, ferr := repo.Git(ctx, "fetch", "-q", "origin", head); ferr != nil {
			log.Warn("default branch not checked: its head cannot be fetched", zap.String("head", head), zap.Error(ferr))
			note(task.RuleNotChecked, "its head "+task.Short(head)+" cannot be fetched")
			return "", nil
		}
	}
	if !repo.IsAncestor(ctx, commit, head) {
		// The failing commit is not on the default branch (a pull
		// request's branch): its head passing says nothing about it.
		log.Info("default branch not checked: the failing commit is not on it", zap.String("branch", branch))
		note(task.RuleNotChecked, "the failing commit is not on "+branch)
		return "", nil
	}
	if err := repo.Checkout(ctx, head); err != nil {
		return "", fmt.Errorf("check the head of %s: %w", branch, err)
	}
	ok, detail, err := passes()
	if cerr := repo.Checkout(context.WithoutCancel(ctx), commit); cerr != nil && err == nil {
		err = fmt.Errorf("back to the failing commit: %w", cerr)
	}
	if err != nil {
		return "", fmt.Errorf("check the head of %s: %w", branch, err)
	}
	log.Info("checked the default branch's head", zap.String("branch", branch), zap.String("head", head), zap.Bool("fixed", ok), zap.String("detail", detail))
	if !ok {
		note(task.RulePass, fmt.Sprintf("still failing at the head %s of %s", task.Short(head), branch))
		return "", nil
	}
	reason = fmt.Sprintf("already fixed on %s: %s at its head %s", branch, detail, task.Short(head))
	note(task.RuleDrop, reason)
	return reason, nil
}

// The rules a task records.
const (
	RuleBudget        = "daily_job_budget"
	RuleDefaultBranch = "fixed_on_default_branch"
	RuleHumanFix      = "human_fix_in_flight"
)

// addRule records what a rule found on the task.
func addRule(tk *task.Task, rule, verdict, detail string) {
	tk.Rules = append(tk.Rules, task.RuleCheck{Rule: rule, Verdict: verdict, Detail: detail})
}

// HumanFixes finds open pull requests by people that may already fix a
// failure; inflight.HumanFixes satisfies it.
type HumanFixes interface {
	// OpenHumanFix returns an open pull request by a person on repo that
	// mentions one of terms or changes one of files, and why it matched
	// ("" when none); checked is false when it could not look (no
	// configured forge serves repo).
	OpenHumanFix(ctx context.Context, repo string, files, terms []string) (url, why string, checked bool, err error)
}

// humanFix says why a person's pull request in flight makes the task
// unneeded ("" when there is none, or it could not be checked: the rule
// never blocks on a forge being away).
//
// It looks for the failing tests' names and the blame commit's hash in pull
// requests' titles and bodies, and for changes to the files the failure
// points at (its frames) and the files the blame commit changed (in the
// checkout at dir).
func (p *process) humanFix(ctx context.Context, repo gitrepo.Repo, tk *task.Task, log *zap.Logger) string {
	note := func(verdict, detail string) { addRule(tk, RuleHumanFix, verdict, detail) }
	h := p.t.cfg.HumanFixes
	if h == nil {
		log.Debug("human fixes in flight: not checked (no forge)")
		note(task.RuleNotChecked, "no forge configured")
		return ""
	}
	var files, terms []string
	for _, f := range tk.Failures {
		if f.Test != "" {
			fn, _, _ := strings.Cut(f.Test, "/")
			terms = appendNew(terms, fn)
		}
		for _, fr := range f.Frames {
			file, _ := splitFrame(fr)
			files = appendNew(files, file)
		}
	}
	if b := tk.Bisection.Blame; len(b) >= 7 {
		terms = appendNew(terms, b[:7])
		out, err := repo.Git(ctx, "show", "--name-only", "--format=", b)
		if err != nil {
			log.Warn("files of the blame commit", zap.Error(err))
		}
		for _, f := range strings.Split(strings.TrimSpace(out), "\n") {
			files = appendNew(files, f)
		}
	}
	url, why, checked, err := h.OpenHumanFix(ctx, tk.Repo, files, terms)
	switch {
	case err != nil:
		log.Warn("human fixes in flight: not checked", zap.Error(err))
		note(task.RuleNotChecked, err.Error())
		return ""
	case !checked:
		log.Info("human fixes in flight: not checked (no configured forge serves the repository)")
		note(task.RuleNotChecked, "no configured forge serves the repository")
		return ""
	case url == "":
		note(task.RulePass, fmt.Sprintf("no open pull request by a person names %s or changes one of %d files of the failure", strings.Join(terms, ", "), len(files)))
		return ""
	}
	reason := fmt.Sprintf("a pull request by a person is in flight: %s (%s)", url, why)
	note(task.RuleDrop, reason)
	return reason
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
