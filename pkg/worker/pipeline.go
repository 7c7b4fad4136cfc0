// Package worker repairs tasks: it checks the failing commit out in a
// workspace, runs the agent, puts the candidate patch through the gates and
// the judge, and publishes the survivors. The queue consumer and the one-shot
// `worker repair` command share the same Pipeline.
package worker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/publish"
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

// Pipeline is the repair of one task, from workspace to pull request.
type Pipeline struct {
	// NewAgent makes a fresh agent for each task: policies keep state
	// within an episode.
	NewAgent  func() Agent
	Policy    string // the policy's name, for the pull request
	Gates     Gates
	Judge     Judge
	Publisher Publisher
	Ledger    Ledger // nil: no cross-worker ledger (one-shot repair)
	WorkDir   string // parent of workspaces; "" for the system's temporary directory
	// Checkouts, when set, opens workspaces (from mirrors of remote
	// repositories); nil clones each job afresh.
	Checkouts Checkouts
	Log       *zap.Logger
	// Progress, when set, is told of each stage as it happens (the demo
	// prints them).
	Progress func(stage, detail string)
}

// Outcome is how a repair ended.
type Outcome struct {
	Status      task.Status
	Reason      string
	PullRequest string
	Gates       []task.Gate
	Agent       harness.Result
	Trajectory  []byte
}

// ErrPermanent marks failures that no retry can mend (a repository or
// commit that does not exist, a malformed task).
var ErrPermanent = errors.New("permanent")

// Permanent wraps err as a permanent failure.
func Permanent(err error) error { return fmt.Errorf("%w: %w", ErrPermanent, err) }

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

	if p.Ledger != nil {
		if url, ok, err := p.Ledger.Published(ctx, t.Fingerprint); err != nil {
			return Outcome{}, fmt.Errorf("check published %s: %w", t.Fingerprint, err)
		} else if ok {
			log.Info("group already has a pull request", zap.String("pull_request", url))
			return Outcome{Status: task.StatusPublished, PullRequest: url, Reason: "already published"}, nil
		}
	}

	var ws *workspace.Workspace
	var err error
	if p.Checkouts != nil {
		ws, err = p.Checkouts.Open(ctx, t.Repo, t.Commit, p.WorkDir)
	} else {
		ws, err = workspace.Open(ctx, t.Repo, t.Commit, p.WorkDir)
	}
	if err != nil {
		if ctx.Err() == nil && (errors.Is(err, gitrepo.ErrUnknownRevision) || missingRepo(err)) {
			return Outcome{}, Permanent(err)
		}
		return Outcome{}, err
	}
	defer ws.Close()
	p.progress("workspace", "checked out %s at %s", t.Repo, task.Short(ws.Commit))

	var traj bytes.Buffer
	res, err := p.NewAgent().Run(ctx, ws, t, &traj)
	if err != nil {
		// What the agent did until then is kept: it says why it stopped.
		return Outcome{Agent: res, Trajectory: traj.Bytes()}, fmt.Errorf("agent on task %s: %w", t.ID, err)
	}
	out := Outcome{Agent: res, Trajectory: traj.Bytes()}
	p.progress("agent", "%d steps, stopped by %s: %s", res.Steps, res.Stop, firstLine(res.Summary))
	log.Info("agent finished", zap.Int("steps", res.Steps), zap.String("stop", res.Stop), zap.Bool("tests_passed", res.TestsPassed))
	if strings.TrimSpace(res.Patch) == "" {
		out.Status, out.Reason = task.StatusNoPatch, "the agent made no change: "+firstLine(res.Summary)
		return out, nil
	}
	if !res.TestsPassed {
		out.Status, out.Reason = task.StatusNoPatch, "the agent's last change does not pass the failing tests"
		return out, nil
	}

	var blameDiff, blameSubject, blameBody string
	if b := t.Bisection.Blame; b != "" {
		if c, err := ws.Repo.Show(ctx, b); err == nil {
			blameDiff, blameSubject, blameBody = c.Diff, c.Subject, c.Body
		} else {
			log.Warn("blame commit is not in the workspace", zap.String("blame", b), zap.Error(err))
		}
	}

	gates, err := p.Gates.Check(ctx, validators.Input{Dir: ws.Dir, Base: ws.Commit, Patch: res.Patch, Task: t, BlameDiff: blameDiff})
	if err != nil {
		return out, fmt.Errorf("gates on task %s: %w", t.ID, err)
	}
	for _, g := range gates {
		p.progress("gate", "%-10s %s %s", g.Name, g.Verdict, firstLine(g.Detail))
	}
	if task.Passed(gates) {
		in := judge.Input{Task: t, Patch: res.Patch, BlameDiff: blameDiff, BlameMessage: blameBody, Gates: gates, Summary: res.Summary}
		g, err := p.Judge.Judge(ctx, judge.WithContext(ws.Dir, in))
		if err != nil {
			return out, fmt.Errorf("judge on task %s: %w", t.ID, err)
		}
		gates = append(gates, g)
		p.progress("gate", "%-10s %s %s", g.Name, g.Verdict, firstLine(g.Detail))
	}
	out.Gates = gates
	// The judge is the only gate allowed not to run: with no model
	// configured its verdict is recorded as "not run", never as a pass.
	if !task.Passed(gates, "judge") {
		out.Status, out.Reason = task.StatusNoPatch, "rejected by "+failedGates(gates)
		log.Info("patch rejected", zap.String("gates", failedGates(gates)))
		return out, nil
	}

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
	url, err := p.Publisher.Publish(ctx, publish.PullRequest{
		Task: t, Patch: res.Patch, Gates: gates, Summary: res.Summary, Trajectory: out.Trajectory,
		BlameSubject: blameSubject, Policy: p.Policy, Steps: res.Steps,
	})
	if err != nil {
		if p.Ledger != nil {
			if rerr := p.Ledger.ReleasePublish(context.WithoutCancel(ctx), t.Fingerprint, owner); rerr != nil {
				log.Warn("release publish claim", zap.Error(rerr))
			}
		}
		return out, fmt.Errorf("publish task %s: %w", t.ID, err)
	}
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
