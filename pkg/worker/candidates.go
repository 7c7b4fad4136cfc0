package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/repoconfig"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/workspace"
)

// Reviser is an agent that can take its rejected candidate back with the
// gates' evidence and try again (a feedback round).
type Reviser interface {
	Revise(ctx context.Context, ws *workspace.Workspace, t task.Task, prior []harness.Step, evidence string, trajectory io.Writer) (harness.Result, error)
}

// candidate is one attempt at a task: its own workspace, the agent's
// result after its feedback rounds, and the gates' verdicts.
type candidate struct {
	n      int // 1-based
	ws     *workspace.Workspace
	res    harness.Result
	traj   bytes.Buffer
	gates  []task.Gate
	rounds int // feedback rounds taken
	spend  llm.Spend
	steps  int // over all rounds
	// past is every round so far, whole: how each ended, its gates, its
	// patch and its part of traj.
	past []task.Round
	// status and reason when the candidate is not publishable.
	status task.Status
	reason string
	err    error

	blameDiff, blameSubject, blameBody string
	// lang is the job's driver.
	lang Language
	// paths is the repository's rule on the paths a patch may change (nil:
	// it names none).
	paths pathRule
}

// accepted reports whether every gate passed (the judge may not have run).
func (c *candidate) accepted() bool {
	return c.err == nil && c.status == "" && task.Passed(c.gates, task.GateJudge)
}

func (c *candidate) judged() bool { return task.Reviewed(c.gates) }

// attempts runs p.samples() candidates, at most p.Parallel at a time, each
// in a workspace of its own, and returns them all; the caller closes their
// workspaces. It fails only when the task cannot be worked on at all (a
// missing repository or commit) or when every candidate failed.
func (p *Pipeline) attempts(ctx context.Context, t task.Task, pol *repoconfig.Policy, log *zap.Logger) ([]*candidate, error) {
	k := max(p.Samples, 1)
	par := min(max(p.Parallel, 1), k)
	cands := make([]*candidate, k)
	sem := make(chan struct{}, par)
	job := jobLanguageOf(pol)
	var wg sync.WaitGroup
	for i := range cands {
		cands[i] = &candidate{n: i + 1, paths: paths(pol)}
		wg.Add(1)
		go func(c *candidate) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			defer func() {
				if r := recover(); r != nil {
					c.err = fmt.Errorf("candidate %d panicked: %v", c.n, r)
				}
			}()
			p.attempt(ctx, t, c, job, log.With(zap.Int("candidate", c.n)))
		}(cands[i])
	}
	wg.Wait()
	var errs []error
	for _, c := range cands {
		if c.err == nil {
			return cands, nil
		}
		if errors.Is(c.err, ErrPermanent) {
			return cands, c.err
		}
		errs = append(errs, c.err)
	}
	return cands, errs[0]
}

// attempt runs one candidate: a workspace, an episode, the gates, and as
// many feedback rounds as configured while the gates reject it.
func (p *Pipeline) attempt(ctx context.Context, t task.Task, c *candidate, job *jobLanguage, log *zap.Logger) {
	ws, err := p.checkout(ctx, t)
	if err != nil {
		if ctx.Err() == nil && (errors.Is(err, gitrepo.ErrUnknownRevision) || errors.Is(err, gitrepo.ErrNoRepository) || missingRepo(err)) {
			err = Permanent(err)
		}
		c.err = err
		return
	}
	c.ws = ws
	ctx = sandbox.WithTree(ctx, ws.Dir)
	if c.paths != nil {
		// The agent's edits refuse what the paths gate would reject.
		ctx = tools.WithPaths(ctx, c.paths)
	}
	p.progress("workspace", "candidate %d: checked out %s at %s", c.n, t.Repo, task.Short(ws.Commit))
	if b := t.Bisection.Blame; b != "" {
		if bc, err := ws.Repo.Show(ctx, b); err == nil {
			c.blameDiff, c.blameSubject, c.blameBody = bc.Diff, bc.Subject, bc.Body
		} else {
			log.Warn("blame commit is not in the workspace", zap.String("blame", b), zap.Error(err))
		}
	}

	if c.lang, err = p.language(ctx, job, t, ws); err != nil {
		c.err = err
		return
	}
	agent := p.NewAgent()
	if la, ok := agent.(LanguageAgent); ok {
		agent = la.WithLanguage(c.lang)
	} else {
		log.Warn("the agent cannot work through the job's language driver", zap.String("language", c.lang.Name()))
	}
	mark := c.traj.Len() // where the round's steps start in the trajectory
	res, err := agent.Run(ctx, ws, t, &c.traj)
	c.res, c.steps, c.spend = res, res.Steps, res.Spend
	if err != nil {
		c.err = fmt.Errorf("agent on task %s: %w", t.ID, err)
		c.endRound(res, mark, task.RoundError, c.err.Error())
		return
	}
	for {
		p.progress("agent", "candidate %d round %d: %d steps, stopped by %s: %s", c.n, c.rounds+1, res.Steps, res.Stop, firstLine(res.Summary))
		log.Info("agent finished", zap.Int("round", c.rounds+1), zap.Int("steps", res.Steps), zap.String("stop", res.Stop),
			zap.Bool("tests_passed", res.TestsPassed), zap.Int("edit_failures", res.EditFailures), zap.Float64("cost_usd", res.Spend.CostUSD))
		c.status, c.reason, c.gates = "", "", nil
		if strings.TrimSpace(res.Patch) == "" {
			c.status, c.reason = task.StatusNoPatch, "the agent made no change: "+firstLine(res.Summary)
			if res.RevertPasses {
				// An answer, not nothing: the task says so first.
				c.reason = "only a revert passes (undoing the culprit's change makes the failing tests pass; no fix found): " + firstLine(res.Summary)
			}
			c.endRound(res, mark, task.RoundNoChange, c.reason)
			return
		}
		if !res.TestsPassed {
			c.status, c.reason = task.StatusNoPatch, "the agent's last change does not pass the failing tests"
			if res.Stop == harness.StopBudget {
				c.reason += "; " + firstLine(res.Summary)
			}
			c.endRound(res, mark, task.RoundTestsFail, c.reason)
			return
		}
		if err := p.check(ctx, t, c); err != nil {
			c.err = err
			c.endRound(res, mark, task.RoundError, err.Error())
			return
		}
		if c.accepted() {
			c.endRound(res, mark, task.RoundAccepted, "")
			return
		}
		c.status, c.reason = task.StatusNoPatch, "rejected by "+failedGates(c.gates)
		c.endRound(res, mark, task.RoundRejected, c.reason)
		rev, ok := agent.(Reviser)
		if !ok || c.rounds >= p.FeedbackRounds || res.Stop == harness.StopBudget || ctx.Err() != nil {
			return
		}
		c.rounds++
		log.Info("candidate rejected; back to the agent with the gates' evidence", zap.Int("round", c.rounds), zap.String("gates", failedGates(c.gates)))
		mark = c.traj.Len()
		next, err := rev.Revise(ctx, ws, t, res.History, evidence(c.gates), &c.traj)
		c.steps += next.Steps
		c.spend = c.spend.Add(next.Spend)
		if err != nil {
			c.err = fmt.Errorf("feedback round %d on task %s: %w", c.rounds, t.ID, err)
			c.endRound(next, mark, task.RoundError, c.err.Error())
			return
		}
		res = next
		c.res = res
	}
}

// endRound records how the candidate's current round ended: res is its
// episode and its steps are in the trajectory from mark on; the gates ran
// on it (c.gates) when it was accepted or rejected, and on no other.
func (c *candidate) endRound(res harness.Result, mark int, verdict, reason string) {
	r := task.Round{Candidate: c.n, N: len(c.past) + 1, Steps: res.Steps, Stop: res.Stop, Verdict: verdict,
		Reason: firstLine(reason), Patch: res.Patch, PatchesTested: res.PatchesTested, TriedBefore: res.TriedBefore}
	if verdict == task.RoundRejected || verdict == task.RoundAccepted {
		r.Gates = append([]task.Gate(nil), c.gates...)
	}
	if b := c.traj.Bytes(); mark <= len(b) {
		r.Trajectory = string(b[mark:])
	}
	c.past = append(c.past, r)
}

// story is why the candidate was not accepted, from its first round on:
// each round the gates rejected, which gates and what they found, then
// how its last round ended (last).
func (c *candidate) story(last string) string {
	if len(c.past) < 2 {
		return last
	}
	var parts []string
	for i, r := range c.past {
		switch {
		case r.Verdict == task.RoundRejected:
			parts = append(parts, fmt.Sprintf("round %d %s", r.N, rejection(r)))
		case i == len(c.past)-1:
			parts = append(parts, fmt.Sprintf("round %d: %s", r.N, last))
		default:
			parts = append(parts, fmt.Sprintf("round %d: %s", r.N, r.Reason))
		}
	}
	return strings.Join(parts, "; ")
}

// rejection says which gates rejected a round and, in a line each, what
// they found: "rejected by regression: 1 new failure(s): …".
func rejection(r task.Round) string {
	var parts []string
	for _, g := range r.Gates {
		if g.Verdict == task.GateFail {
			parts = append(parts, g.Name+": "+clipLine(firstLine(g.Detail), maxStoryDetail))
		}
	}
	if len(parts) == 0 {
		return r.Verdict
	}
	return "rejected by " + strings.Join(parts, " and ")
}

// maxStoryDetail bounds what a reason tells of one gate's finding.
const maxStoryDetail = 200

// clipLine cuts s to n characters, marking the cut.
func clipLine(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// check runs the gates on the candidate, then the judge when they pass. They
// judge the patch alone: applied to a clean checkout of the task's commit,
// never the agent's workspace, where the tests ran and may have left files
// the patch does not hold.
func (p *Pipeline) check(ctx context.Context, t task.Task, c *candidate) error {
	clean, err := c.ws.Sibling(ctx, "", p.WorkDir)
	if err != nil {
		return fmt.Errorf("clean checkout for the gates of task %s: %w", t.ID, err)
	}
	defer clean.Close()
	ctx = sandbox.WithTree(ctx, clean.Dir)
	if out, err := clean.Apply(ctx, c.res.Patch); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.gates = []task.Gate{{Name: "apply", Verdict: task.GateFail, Detail: "the patch does not apply to a clean checkout of " + task.Short(c.ws.Commit) + ": " + firstLine(out)}}
		return nil
	}
	in := validators.Input{Dir: clean.Dir, Workspace: clean, Base: clean.Commit, Patch: c.res.Patch, Task: t, BlameDiff: c.blameDiff, Lang: c.lang}
	if c.paths != nil {
		in.Paths = c.paths
	}
	// The gates run the tests on the clean checkout: its dependencies as
	// the candidate's (a cached environment, for Python).
	if err := c.lang.Setup(ctx, clean.Dir); err != nil {
		return fmt.Errorf("set up the clean checkout for the gates of task %s: %w", t.ID, err)
	}
	gates, err := p.Gates.Check(ctx, in)
	if err != nil {
		return fmt.Errorf("gates on task %s: %w", t.ID, err)
	}
	for _, g := range gates {
		p.progress("gate", "candidate %d: %-10s %s %s", c.n, g.Name, g.Verdict, firstLine(g.Detail))
	}
	if task.Passed(gates) {
		in := judge.Input{Task: t, Patch: c.res.Patch, BlameDiff: c.blameDiff, BlameMessage: c.blameBody, Gates: gates, Summary: c.res.Summary}
		// The judge's calls are the candidate's spend too.
		var tally llm.Tally
		in = judge.WithContext(clean.Dir, c.lang, in)
		g, err := p.Judge.Judge(llm.WithTally(ctx, &tally), in)
		c.spend = c.spend.Add(tally.Spent())
		if err != nil {
			return fmt.Errorf("judge on task %s: %w", t.ID, err)
		}
		gates = append(gates, g)
		p.progress("gate", "candidate %d: %-10s %s %s", c.n, g.Name, g.Verdict, firstLine(g.Detail))
	}
	c.gates = gates
	return nil
}

// evidence is what the agent is told of a rejection: each failed gate and
// its detail (which test failed, and how).
func evidence(gates []task.Gate) string {
	var b strings.Builder
	for _, g := range gates {
		if g.Verdict != task.GateFail {
			continue
		}
		fmt.Fprintf(&b, "Gate %s rejected the candidate:\n%s\n\n", g.Name, strings.TrimSpace(g.Detail))
	}
	return strings.TrimSpace(b.String())
}

// choose ranks the candidates and returns the best: accepted ones first;
// among them the judge's pass before a judge that did not run, then the
// candidate whose patch most others agree with (the same change, compared
// without whitespace), then the smallest patch, then the first. With none
// accepted it returns the one that came closest, for the record.
func choose(cands []*candidate) *candidate {
	agree := map[string]int{}
	for _, c := range cands {
		if c.accepted() {
			agree[normPatch(c.res.Patch)]++
		}
	}
	ranked := append([]*candidate(nil), cands...)
	score := func(c *candidate) [4]int {
		s := [4]int{}
		switch {
		case c.accepted():
			s[0] = 3
		case c.err == nil && len(c.gates) > 0:
			s[0] = 2 // gated and rejected
		case c.err == nil:
			s[0] = 1
		}
		if c.judged() {
			s[1] = 1
		}
		s[2] = agree[normPatch(c.res.Patch)]
		s[3] = -len(c.res.Patch)
		return s
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := score(ranked[i]), score(ranked[j])
		for k := range a {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return false
	})
	return ranked[0]
}

// normPatch is a patch's changed lines without whitespace, so that two
// candidates that made the same change agree.
func normPatch(patch string) string {
	var b strings.Builder
	for _, l := range strings.Split(patch, "\n") {
		if strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
			continue
		}
		if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
			b.WriteByte(l[0])
			b.WriteString(strings.Join(strings.Fields(l[1:]), ""))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// checkout opens a candidate's workspace: from the mirrors when the pipeline
// has them (remote repositories, with the installation's credentials), else
// by cloning afresh.
func (p *Pipeline) checkout(ctx context.Context, t task.Task) (*workspace.Workspace, error) {
	if p.Checkouts != nil {
		return p.Checkouts.Open(ctx, t.Repo, t.Commit, p.WorkDir)
	}
	return workspace.Open(ctx, t.Repo, t.Commit, p.WorkDir)
}
