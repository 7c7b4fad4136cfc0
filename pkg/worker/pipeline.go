// Package worker repairs tasks: it checks the failing commit out in a
// workspace, runs the agent, puts the candidate patch through the gates and
// the judge, and publishes the survivors. The queue consumer and the one-shot
// `worker repair` command share the same Pipeline.
package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/revert"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/workspace"
)

// Agent runs one episode of the agent on a workspace.
type Agent interface {
	Run(ctx context.Context, ws *workspace.Workspace, t task.Task, trajectory io.Writer) (harness.Result, error)
}

// Gates checks a candidate patch.
type Gates interface {
	Check(ctx context.Context, in validators.Input) ([]task.Gate, error)
}

// Judge gives the LLM's verdict on a patch that passed the gates.
type Judge interface {
	Judge(ctx context.Context, in judge.Input) (task.Gate, error)
}

// Checkouts gives a job its workspace (workspace.Mirrors).
type Checkouts interface {
	Open(ctx context.Context, repo, commit, parent string) (*workspace.Workspace, error)
}

// Publisher opens the pull request.
type Publisher interface {
	Publish(ctx context.Context, pr publish.PullRequest) (string, error)
}

// Ledger remembers what was published, so that a redelivered job never
// opens a second pull request for the same failure group.
type Ledger interface {
	Published(ctx context.Context, fingerprint string) (url string, ok bool, err error)
	ClaimPublish(ctx context.Context, fingerprint, owner string, ttl time.Duration) (bool, error)
	ReleasePublish(ctx context.Context, fingerprint, owner string) error
	MarkPublished(ctx context.Context, fingerprint, url string) error
}

// RepoSpending counts what each repository's tasks spend on the model per
// UTC day (store.Store).
type RepoSpending interface {
	RepoSpend(ctx context.Context, repo string, at time.Time) (task.RepoSpend, error)
	AddRepoSpend(ctx context.Context, repo string, at time.Time, tokens int, costUSD float64) error
}

// Pipeline is the repair of one task, from workspace to pull request.
type Pipeline struct {
	// NewAgent makes a fresh agent for each task: policies keep state
	// within an episode.
	NewAgent  func() Agent
	Policy    string // the policy's name, for the pull request
	Gates     Gates
	Judge     Judge
	Publisher Publisher
	// Revisions pushes the revisions reviewers ask for; nil refuses them.
	Revisions RevisionPublisher
	Ledger    Ledger // nil: no cross-worker ledger (one-shot repair)
	WorkDir   string // parent of workspaces; "" for the system's temporary directory
	// Checkouts, when set, opens workspaces (from mirrors of remote
	// repositories); nil clones each job afresh.
	Checkouts Checkouts
	// Languages chooses each job's language driver from its checkout
	// (once per job), which sets each candidate's checkout up and which
	// the agent (a LanguageAgent), the gates and the judge work through.
	// A pipeline without it fails every job: no language is assumed.
	Languages Languages
	Log       *zap.Logger
	// Progress, when set, is told of each stage as it happens (the demo
	// prints them).
	Progress func(stage, detail string)
	// Samples is how many independent candidates a task gets (0 or 1: one),
	// Parallel how many run at once; FeedbackRounds how many times a
	// candidate the gates reject goes back to its agent (a Reviser) with
	// their evidence.
	Samples, Parallel, FeedbackRounds int
	// Model names the model whose calls the spend counts ("" without one).
	Model string
	// Reverts, when set, reverts the task's culprit when the repair
	// produced nothing that passed the gates, or before the repair when
	// the repository reverts the culprit's paths first (revert.Reverter).
	Reverts Reverts
	// Spending, with RepoDaily's tokens or cost set, holds each
	// repository's model spend to RepoDaily per UTC day: a task starts
	// only while some is left and its episodes share what is left.
	Spending  RepoSpending
	RepoDaily harness.Budget
	// RepoPolicies, when set, reads each task's repository policy at its
	// commit (the central configuration narrowed by .redfix.yaml): an
	// opted-out repository is not repaired, its paths are a gate, its
	// reviewers and labels go on the pull request, its driver is chosen.
	RepoPolicies RepoPolicies
	// OpenPulls, when set, counts redfix's open pull requests on a
	// repository, for the policy's limit on them.
	OpenPulls OpenPulls
}

// RepoPolicies reads a repository's policy at a commit (repoconfig.Loader).
// An invalid file comes as a *repoconfig.InvalidError with the central
// policy, which applies; any other error is the machinery failing.
type RepoPolicies interface {
	Load(ctx context.Context, repo, commit string) (repoconfig.Policy, error)
}

// OpenPulls counts redfix's open pull requests on a repository.
type OpenPulls interface {
	OpenPullRequests(ctx context.Context, repo string) (int, error)
}

// repoDailyScope names the repository's daily budget in reasons.
const repoDailyScope = "the repository's daily budget"

// dailyLeft returns the part of the repository's daily budget that each
// episode of a task may spend, or a reason to refuse the task when none is
// left. Without a daily budget it returns a zero Budget (no limit).
func (p *Pipeline) dailyLeft(ctx context.Context, repo string) (harness.Budget, string, error) {
	d := p.RepoDaily
	if p.Spending == nil || (d.Tokens <= 0 && d.CostUSD <= 0) {
		return harness.Budget{}, "", nil
	}
	spent, err := p.Spending.RepoSpend(ctx, repo, time.Now())
	if err != nil {
		return harness.Budget{}, "", err
	}
	if d.Tokens > 0 && spent.Tokens >= d.Tokens {
		return harness.Budget{}, fmt.Sprintf("refused: %s is spent (%d of %d tokens today, UTC)", repoDailyScope, spent.Tokens, d.Tokens), nil
	}
	if d.CostUSD > 0 && spent.CostUSD >= d.CostUSD {
		return harness.Budget{}, fmt.Sprintf("refused: %s is spent ($%.4f of $%.4f today, UTC)", repoDailyScope, spent.CostUSD, d.CostUSD), nil
	}
	// Every candidate and every feedback round is an episode: each gets
	// an equal share, so that together they stay within what is left.
	episodes := max(p.Samples, 1) * (1 + max(p.FeedbackRounds, 0))
	left := harness.Budget{Scope: repoDailyScope}
	if d.Tokens > 0 {
		left.Tokens = max((d.Tokens-spent.Tokens)/episodes, 1)
	}
	if d.CostUSD > 0 {
		left.CostUSD = (d.CostUSD - spent.CostUSD) / float64(episodes)
	}
	return left, "", nil
}

// charge adds what the task spent to its repository's day.
func (p *Pipeline) charge(ctx context.Context, log *zap.Logger, repo string, s llm.Spend) {
	if p.Spending == nil || s.Calls == 0 {
		return
	}
	if err := p.Spending.AddRepoSpend(context.WithoutCancel(ctx), repo, time.Now(), s.Total(), s.CostUSD); err != nil {
		log.Warn("record the repository's spend", zap.Error(err))
	}
}

// TaskSpend is what the outcome's model calls used, as the task records it.
func (o Outcome) TaskSpend(model string) task.Spend {
	return task.Spend{Model: model, Calls: o.Spend.Calls, InputTokens: o.Spend.PromptTokens, CachedTokens: o.Spend.CachedTokens,
		OutputTokens: o.Spend.CompletionTokens, CostUSD: o.Spend.CostUSD}
}

// Outcome is how a repair ended.
type Outcome struct {
	Status      task.Status
	Reason      string
	PullRequest string
	// Description is the published fix's description where its forge has
	// no page that shows it (publish.Delivery).
	Description string
	Gates       []task.Gate
	Agent       harness.Result
	Trajectory  []byte
	// Candidates is how many attempts were made, Chosen the one kept
	// (1-based), Rounds its feedback rounds and Steps its steps over them.
	Candidates, Chosen, Rounds, Steps int
	// AllRounds is every candidate's rounds, as the task keeps them
	// (task.BoundRounds): how each ended, its gates, patch and trajectory.
	AllRounds []task.Round
	// Rejections counts, by gate, the rounds each gate rejected, over
	// every round of every candidate (AllRounds may have dropped some).
	Rejections map[string]int
	// Spend is what every candidate's model calls used and cost.
	Spend llm.Spend
}

// ErrPermanent marks failures that no retry can mend (a repository or
// commit that does not exist, a malformed task).
var ErrPermanent = stream.ErrPermanent

// Permanent wraps err as a permanent failure.
func Permanent(err error) error { return stream.Permanent(err) }

// errBusy is returned when another worker holds the publish claim.
var errBusy = errors.New("another worker is publishing this group")

func (p *Pipeline) progress(stage, format string, args ...any) {
	if p.Progress != nil {
		p.Progress(stage, fmt.Sprintf(format, args...))
	}
}

// Repair runs the whole pipeline for t. The error is for failures of the
// machinery (retry them unless errors.Is(err, ErrPermanent)); a patch that
// was not found or was rejected is an Outcome, not an error.
func (p *Pipeline) Repair(ctx context.Context, t task.Task) (Outcome, error) {
	log := p.Log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo), zap.String("fingerprint", t.Fingerprint))
	// Commands run for this task are confined as its repository's.
	ctx = confined(ctx, t)

	if p.Ledger != nil {
		if url, ok, err := p.Ledger.Published(ctx, t.Fingerprint); err != nil {
			return Outcome{}, fmt.Errorf("check published %s: %w", t.Fingerprint, err)
		} else if ok {
			log.Info("group already has a pull request", zap.String("pull_request", url))
			return Outcome{Status: task.StatusPublished, PullRequest: url, Reason: "already published"}, nil
		}
	}

	pol, stop, err := p.repoPolicy(ctx, t, log)
	if err != nil {
		return Outcome{}, err
	}
	if stop.Status != "" {
		p.progress("policy", "%s", stop.Reason)
		return stop, nil
	}

	left, refused, err := p.dailyLeft(ctx, t.Repo)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the daily spend of %s: %w", t.Repo, err)
	}
	if refused != "" {
		log.Warn("task refused for budget", zap.String("reason", refused))
		p.progress("budget", "%s", refused)
		return Outcome{Status: task.StatusOverBudget, Reason: refused}, nil
	}
	if left != (harness.Budget{}) {
		ctx = harness.WithBudget(ctx, left)
	}

	if url, ok := p.revert(ctx, t, revert.FirstPaths, pol, log); ok {
		return Outcome{Status: task.StatusPublished, PullRequest: url, Reason: "reverted the culprit before any repair: " + revert.FirstPaths.String()}, nil
	}

	cands, err := p.attempts(ctx, t, pol, log)
	defer func() {
		for _, c := range cands {
			if c != nil && c.ws != nil {
				_ = c.ws.Close()
			}
		}
	}()
	best := choose(cands)
	out := attemptsOutcome(cands, best)
	p.charge(ctx, log, t.Repo, out.Spend)
	if err != nil {
		// What the agent did until then is kept: it says why it stopped.
		return out, err
	}
	if len(cands) > 1 {
		log.Info("candidates ranked", zap.Int("candidates", len(cands)), zap.Int("chosen", best.n), zap.Bool("accepted", best.accepted()))
		p.progress("choose", "candidate %d of %d", best.n, len(cands))
	}
	if !best.accepted() {
		return p.noPatch(ctx, t, best, pol, out, log), nil
	}
	return p.publish(ctx, t, best, pol, out, log)
}

// attemptsOutcome is the outcome of the attempts cands, best chosen among
// them: its patch, trajectory and gates, and what all of them spent and
// which gates rejected their rounds.
func attemptsOutcome(cands []*candidate, best *candidate) Outcome {
	out := Outcome{Agent: best.res, Trajectory: best.traj.Bytes(), Gates: best.gates,
		Candidates: len(cands), Chosen: best.n, Rounds: best.rounds, Steps: best.steps}
	var all []task.Round
	for _, c := range cands {
		out.Spend = out.Spend.Add(c.spend)
		for _, r := range c.past {
			all = append(all, r)
			for _, g := range r.Rejected() {
				if out.Rejections == nil {
					out.Rejections = map[string]int{}
				}
				out.Rejections[g]++
			}
		}
	}
	out.AllRounds = BoundRounds(all, best.n)
	return out
}

// noPatch is the outcome when the chosen attempt was not accepted: why it
// stopped, and the culprit's revert offered instead where the policy
// allows one.
func (p *Pipeline) noPatch(ctx context.Context, t task.Task, best *candidate, pol *repoconfig.Policy, out Outcome, log *zap.Logger) Outcome {
	out.Status, out.Reason = best.status, best.story(best.reason)
	if best.err != nil {
		out.Status, out.Reason = task.StatusNoPatch, best.story(best.err.Error())
	}
	if len(best.gates) > 0 {
		log.Info("patch rejected", zap.String("gates", failedGates(best.gates)))
	}
	if out.Status == task.StatusNoPatch {
		if url, ok := p.revert(ctx, t, revert.NoPatch, pol, log); ok {
			out.Status, out.PullRequest = task.StatusPublished, url
			out.Reason = "reverted the culprit: " + out.Reason
		}
	}
	return out
}

// publish opens the pull request of the accepted attempt best, once per
// failure group across workers (the ledger's claim), and records it.
func (p *Pipeline) publish(ctx context.Context, t task.Task, best *candidate, pol *repoconfig.Policy, out Outcome, log *zap.Logger) (Outcome, error) {
	res, gates, blameSubject := best.res, best.gates, best.blameSubject

	// The claim's owner is this delivery of the task's job, not the task:
	// two deliveries of one job running at once (a heartbeat lost, the job
	// handed to a second worker) must not both hold it. A delivery that
	// died holding it blocks the group until the claim expires, which the
	// job's retries outlast.
	owner := publishOwner(t.ID)
	if p.Ledger != nil {
		ok, err := p.Ledger.ClaimPublish(ctx, t.Fingerprint, owner, publishClaimTTL)
		if err != nil {
			return out, fmt.Errorf("claim publish %s: %w", t.Fingerprint, err)
		}
		if !ok {
			// Published by another worker since the check above, or being
			// published right now.
			if url, done, err := p.Ledger.Published(ctx, t.Fingerprint); err == nil && done {
				out.Status, out.PullRequest, out.Reason = task.StatusPublished, url, "already published"
				return out, nil
			}
			return out, errBusy
		}
	}
	delivered, err := deliver(ctx, p.Publisher, publish.PullRequest{
		Task: t, Patch: res.Patch, Gates: gates, Summary: res.Summary, Trajectory: out.Trajectory,
		BlameSubject: blameSubject, Policy: p.Policy, Steps: out.Steps,
		Candidates: out.Candidates, Chosen: out.Chosen, Rounds: out.Rounds, Spend: out.Spend,
		Reviewers: reviewers(pol), Labels: labels(pol),
	})
	if err != nil {
		if p.Ledger != nil {
			if rerr := p.Ledger.ReleasePublish(context.WithoutCancel(ctx), t.Fingerprint, owner); rerr != nil {
				log.Warn("release publish claim", zap.Error(rerr))
			}
		}
		err = fmt.Errorf("publish task %s: %w", t.ID, err)
		if cannotDeliver(err) {
			// The publisher cannot deliver to this repository at all: no
			// retry mends that, so the task fails now instead of
			// repeating the whole repair nats.max_deliver times.
			err = Permanent(err)
		}
		return out, err
	}
	url := delivered.URL
	out.Description = delivered.Description
	if p.Ledger != nil {
		if err := p.Ledger.MarkPublished(ctx, t.Fingerprint, url); err != nil {
			return out, fmt.Errorf("record published %s: %w", t.Fingerprint, err)
		}
	}
	out.Status, out.PullRequest = task.StatusPublished, url
	p.progress("publish", "%s", url)
	log.Info("pull request published", zap.String("pull_request", url))
	return out, nil
}

// deliver publishes pr through pub, saying what it delivered when pub can
// (publish.Deliverer).
func deliver(ctx context.Context, pub Publisher, pr publish.PullRequest) (publish.Delivery, error) {
	if d, ok := pub.(publish.Deliverer); ok {
		return d.Deliver(ctx, pr)
	}
	url, err := pub.Publish(ctx, pr)
	return publish.Delivery{URL: url}, err
}

// cannotDeliver reports a publishing error that no retry mends: the
// repository is not where the publisher delivers (the local publisher and
// a URL), no configured forge serves it, its forge cannot take a fix, or
// there is no way at all.
func cannotDeliver(err error) bool {
	return errors.Is(err, publish.ErrNotLocal) || errors.Is(err, publish.ErrNoDelivery) ||
		errors.Is(err, forge.ErrNotServed) || errors.Is(err, forge.ErrUnsupported)
}

func missingRepo(err error) bool {
	s := err.Error()
	return strings.Contains(s, "does not exist") || strings.Contains(s, "not a git repository") || strings.Contains(s, "not found")
}

func failedGates(gates []task.Gate) string {
	var names []string
	for _, g := range gates {
		if g.Verdict == task.GateFail {
			names = append(names, g.Name)
		}
	}
	if len(names) == 0 {
		return "no gate"
	}
	return strings.Join(names, ", ")
}

// firstLine is the first line of s; a line that ends with a colon
// introduces the next one, which is joined to it.
func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	out := strings.TrimSpace(lines[0])
	for i := 1; i < len(lines) && strings.HasSuffix(out, ":"); i++ {
		if next := strings.TrimSpace(lines[i]); next != "" {
			out += " " + next
		}
	}
	return out
}

// publishClaimTTL bounds how long a publish claim outlives a worker that
// died while publishing.
const publishClaimTTL = 5 * time.Minute

// publishOwner is unique to one call of Repair: the task and a random
// token.
func publishOwner(taskID string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return taskID + "/" + hex.EncodeToString(b[:])
}

// confined names the repository t's commands run for, and, for a task of
// a change request from a fork, that they run a source the repository does
// not control: their setups fill caches of their own, which no trusted
// run reads (sandbox.WithUntrusted).
func confined(ctx context.Context, t task.Task) context.Context {
	ctx = sandbox.WithRepo(ctx, t.Repo)
	if t.Fork != "" {
		ctx = sandbox.WithUntrusted(ctx)
	}
	return ctx
}
