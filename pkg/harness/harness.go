// Package harness runs the agent: a ReAct loop in which a policy chooses one
// action at a time among the tools (pkg/harness/tools), each action's
// observation is recorded and fed back, and the run ends with a candidate
// patch and its trajectory.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// Config bounds an episode.
type Config struct {
	// MaxSteps is the step budget; 0 means 40.
	MaxSteps int
	// MaxRepeats is how many identical actions in a row stop the loop;
	// 0 means 3.
	MaxRepeats int
	// OutputLimit caps an observation's content, in characters; the head
	// and the tail are kept. 0 means 8000.
	OutputLimit int
	// Budget bounds tokens, cost and wall time; Meter reads what the
	// episode's model calls spent (nil: nothing is counted).
	Budget Budget
	Meter  Meter
	// TestRunFloor is the least time a test run after the session's first
	// may take before it is stopped: each may take tools.TestRunFactor
	// times as long as the first run of the task's failing tests, and at
	// least this (0 means DefaultTestRunFloor). An edit that makes a test
	// loop forever then costs a bounded run, not the driver's whole
	// timeout.
	TestRunFloor time.Duration
}

// Defaults for Config.
const (
	DefaultMaxSteps    = 40
	DefaultMaxRepeats  = 3
	DefaultOutputLimit = 8000
	// DefaultTestRunFloor bounds the agent's test runs after its first
	// (see Config.TestRunFloor).
	DefaultTestRunFloor = 2 * time.Minute
)

func (c Config) withDefaults() Config {
	if c.MaxSteps <= 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.MaxRepeats <= 0 {
		c.MaxRepeats = DefaultMaxRepeats
	}
	if c.OutputLimit <= 0 {
		c.OutputLimit = DefaultOutputLimit
	}
	if c.TestRunFloor <= 0 {
		c.TestRunFloor = DefaultTestRunFloor
	}
	return c
}

// Why an episode ended, in Result.Stop.
const (
	StopExit     = "exit"
	StopBudget   = "budget"
	StopRepeated = "repeated"
	StopPolicy   = "policy" // the policy returned an error
	StopError    = "error"  // a tool hit an infrastructure failure, or ctx ended
)

// Harness runs episodes: a policy chooses actions, the tools carry them out
// in a workspace, and every step is recorded.
type Harness struct {
	cfg     Config
	policy  Policy
	lang    tools.Language // nil until WithLanguage: an episode then fails
	patcher tools.Patcher
	tools   []tools.Tool
	log     *zap.Logger
}

// New makes a harness whose policy chooses among all the tools, working
// through the language driver l (nil when each job's is given with
// WithLanguage). patcher may be nil: edits then need explicit blocks.
func New(cfg Config, policy Policy, l tools.Language, patcher tools.Patcher, log *zap.Logger) *Harness {
	if log == nil {
		log = zap.NewNop()
	}
	return &Harness{cfg: cfg.withDefaults(), policy: policy, lang: l, patcher: patcher, tools: tools.All(), log: log}
}

// WithLanguage is a harness like h whose tools work through l, the
// driver a job chose for its repository: tests run with it, tests are
// named as it names them, edits are checked with it and symbols found in
// its index, and the tools are described in its words. There is no
// default language: a harness without one runs no episode.
func (h *Harness) WithLanguage(l tools.Language) *Harness {
	c := *h
	c.lang = l
	return &c
}

// WithTools is a harness like h whose policy chooses among set, in its
// order, instead of all the tools.
func (h *Harness) WithTools(set []tools.Tool) *Harness {
	c := *h
	c.tools = append([]tools.Tool(nil), set...)
	return &c
}

// errNoLanguage is an episode on a harness given no language driver.
var errNoLanguage = fmt.Errorf("no language driver for the tools to work through: %w", lang.ErrNoDriver)

// session is a session of h's tools on task t in ws.
func (h *Harness) session(ws *workspace.Workspace, t task.Task) *tools.Session {
	return tools.NewSession(tools.Env{
		Lang: h.lang, Patcher: h.patcher,
		OutputLimit: h.cfg.OutputLimit, TestRunFloor: h.cfg.TestRunFloor, Log: h.log,
	}, ws, t, h.tools)
}

// Run runs one episode of task t in ws, writing each step to trajectory as
// one JSON line (trajectory may be nil). The returned error reports a policy
// error, an infrastructure failure or the end of ctx; the Result then holds
// what was done until then.
func (h *Harness) Run(ctx context.Context, ws *workspace.Workspace, t task.Task, trajectory io.Writer) (Result, error) {
	return h.run(ctx, ws, t, nil, trajectory)
}

// run runs an episode that starts after prior steps (a feedback round
// continues its candidate's episode); the step budget counts only the new
// steps, and only they are written to trajectory.
func (h *Harness) run(ctx context.Context, ws *workspace.Workspace, t task.Task, prior []Step, trajectory io.Writer) (Result, error) {
	if h.lang == nil {
		return Result{Stop: StopError}, fmt.Errorf("episode of task %s: %w", t.ID, errNoLanguage)
	}
	log := h.log.With(zap.String("task_id", t.ID), zap.String("repo", t.Repo))
	// Commands the tools run in the workspace may write all of it.
	ctx = sandbox.WithTree(ctx, ws.Dir)
	s := h.session(ws, t)
	defer s.Close()
	ep := &Episode{Task: t, Tools: tools.Specs(h.tools, h.lang), Words: tools.WordsOf(h.lang), MaxSteps: len(prior) + h.cfg.MaxSteps, Steps: append([]Step(nil), prior...)}
	base := len(prior)
	res := Result{}
	var (
		lastKey string
		repeats int
		runErr  error
		w       watch
	)
	begun, spentBefore, extra := time.Now(), h.spent(), BudgetFrom(ctx)
	for {
		if why := h.budgetSpent(len(ep.Steps)-base, spentBefore, begun, extra); why != "" {
			res.Stop, res.Summary = StopBudget, "stopped: "+why
			break
		}
		if err := ctx.Err(); err != nil {
			res.Stop = StopError
			runErr = fmt.Errorf("episode of task %s before step %d: %w", t.ID, len(ep.Steps)+1, err)
			break
		}
		spentAtStep := h.spent() // the policy's call belongs to the step
		act, err := h.policy.Next(ctx, ep)
		if err != nil {
			res.Stop = StopPolicy
			runErr = fmt.Errorf("policy %s at step %d of task %s: %w", h.policy.Name(), len(ep.Steps)+1, t.ID, err)
			break
		}
		n := len(ep.Steps) + 1
		key := actionKey(act)
		if key == lastKey {
			repeats++
		} else {
			lastKey, repeats = key, 1
		}

		step, err := h.step(ctx, s, n, act, repeats, spentAtStep)
		if err != nil {
			res.Stop = StopError
			runErr = fmt.Errorf("step %d (%s) of task %s: %w", n, act.Name, t.ID, err)
			break
		}
		obs := step.Observation
		w.observe(ctx, ws, s, obs, &res)
		ep.Steps = append(ep.Steps, step)
		if err := writeStep(trajectory, step); err != nil {
			res.Stop = StopError
			runErr = fmt.Errorf("task %s: %w", t.ID, err)
			break
		}
		log.Debug("step",
			zap.Int("step", n), zap.String("action", act.Name),
			zap.Bool("is_error", obs.IsError), zap.Int64("elapsed_ms", step.ElapsedMS))

		if summary, ok := s.Exited(); ok {
			res.Stop = StopExit
			res.Summary = summary
			res.RevertPasses = s.RevertPasses()
			break
		}
		if repeats >= h.cfg.MaxRepeats {
			res.Stop = StopRepeated
			res.Summary = fmt.Sprintf("stopped: %s repeated %d times in a row", act.Name, repeats)
			break
		}
	}

	res.Steps = len(ep.Steps) - base
	res.History = ep.Steps
	res.TestsPassed = s.OraclePassed()
	runErr = errors.Join(runErr, h.settle(ctx, ws, t, &res, w.passing, w.hasPassing, log))
	res.PatchesTested, res.TriedBefore = w.tried.count(res.Patch)
	if strings.TrimSpace(res.Patch) != "" {
		// A patch left behind is the answer, not the revert.
		res.RevertPasses = false
	}
	res.Spend = h.spent().Sub(spentBefore)
	logEnd(log, ep, res, runErr)
	return res, runErr
}

// step runs the action act as the episode's step n (a repeat past the
// limit is not run: its observation says so), its observation clipped,
// with what the policy's call and the action spent since spentAtStep.
func (h *Harness) step(ctx context.Context, s *tools.Session, n int, act Action, repeats int, spentAtStep llm.Spend) (Step, error) {
	started := time.Now()
	var obs tools.Observation
	if repeats >= h.cfg.MaxRepeats {
		obs = tools.Observation{IsError: true, Content: fmt.Sprintf(
			"Not run: %s was asked %d times in a row with the same arguments; the episode stops here.", act.Name, repeats)}
	} else {
		var err error
		if obs, err = s.Execute(ctx, act.Name, act.Args); err != nil {
			return Step{}, err
		}
	}
	obs.Clip(h.cfg.OutputLimit)
	step := Step{N: n, Policy: h.policy.Name(), Action: act, Observation: obs,
		Started: started, ElapsedMS: time.Since(started).Milliseconds()}
	if d := h.spent().Sub(spentAtStep); d.Calls > 0 {
		step.Spend = &d
	}
	return step, nil
}

// watch is what an episode keeps from its observations: the candidate
// patches run_tests tested, and the workspace's diff the last time the
// oracle tests passed (passing), kept in case the agent breaks it again
// before a budget ends the episode.
type watch struct {
	tried      tested
	passing    string
	hasPassing bool
}

// observe counts the observation's edit into res, and notes the patch
// its test run tested and whether the oracle tests passed on it.
func (w *watch) observe(ctx context.Context, ws *workspace.Workspace, s *tools.Session, obs tools.Observation, res *Result) {
	if obs.Edit != nil {
		res.Edits++
		if !obs.Edit.Applied {
			res.EditFailures++
		} else {
			w.tried.edited()
		}
	}
	if obs.Tests != nil && w.tried.needsDiff() {
		if d, err := ws.Diff(ctx); err == nil {
			w.tried.ran(d)
		}
	}
	if s.OraclePassed() && obs.Tests != nil {
		if d, err := ws.Diff(ctx); err == nil {
			w.passing, w.hasPassing = d, true
		}
	}
}

// budgetSpent says why the episode stops before its next step, after
// steps of its own: the step budget, or the configuration's or the
// context's (extra) budget of calls, tokens, cost or time, counted from
// spentBefore and begun; "" to go on.
func (h *Harness) budgetSpent(steps int, spentBefore llm.Spend, begun time.Time, extra Budget) string {
	if steps >= h.cfg.MaxSteps {
		return fmt.Sprintf("the budget of %d steps is spent", h.cfg.MaxSteps)
	}
	spentNow, elapsed := h.spent().Sub(spentBefore), time.Since(begun)
	if why := h.cfg.Budget.exhausted(spentNow, elapsed); why != "" {
		return why
	}
	return extra.exhausted(spentNow, elapsed)
}

// writeStep appends the step to the trajectory, a JSON object a line.
func writeStep(trajectory io.Writer, step Step) error {
	if trajectory == nil {
		return nil
	}
	line, err := json.Marshal(step)
	if err != nil {
		return fmt.Errorf("encode step %d: %w", step.N, err)
	}
	if _, err := trajectory.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write step %d to the trajectory: %w", step.N, err)
	}
	return nil
}

// settle takes the workspace's diff as the episode's patch; when a budget
// ended the episode after the agent broke a state that passed (passing),
// the passing state is restored and kept instead. The patch is wanted
// even when ctx has ended: the diff is local and quick.
func (h *Harness) settle(ctx context.Context, ws *workspace.Workspace, t task.Task, res *Result, passing string, hasPassing bool, log *zap.Logger) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	patch, err := ws.Diff(dctx)
	if err != nil {
		return fmt.Errorf("diff of the workspace of task %s: %w", t.ID, err)
	}
	res.Patch = patch
	if res.TestsPassed || !hasPassing || res.Stop == StopExit || patch == passing {
		return nil
	}
	if err := restorePassing(dctx, ws, passing); err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	res.Patch, res.TestsPassed, res.KeptPassing = passing, true, true
	log.Info("kept the last state that passed the failing tests", zap.Int("patch_bytes", len(passing)))
	return nil
}

// logEnd logs how the episode ended, with its figures.
func logEnd(log *zap.Logger, ep *Episode, res Result, runErr error) {
	last := ""
	if len(ep.Steps) > 0 {
		last = ep.Steps[len(ep.Steps)-1].Action.Name
	}
	fields := []zap.Field{
		zap.Int("step", res.Steps), zap.String("action", last), zap.String("stop", res.Stop),
		zap.Bool("tests_passed", res.TestsPassed), zap.Int("patch_bytes", len(res.Patch)),
		zap.Int("edits", res.Edits), zap.Int("edit_failures", res.EditFailures),
		zap.Int("patches_tested", res.PatchesTested), zap.Int("tried_before", res.TriedBefore),
		zap.Int("input_tokens", res.Spend.PromptTokens), zap.Int("cached_tokens", res.Spend.CachedTokens),
		zap.Int("output_tokens", res.Spend.CompletionTokens), zap.Float64("cost_usd", res.Spend.CostUSD),
	}
	if runErr != nil {
		log.Info("episode ended with an error", append(fields, zap.Error(runErr))...)
	} else {
		log.Info("episode ended", fields...)
	}
}

// actionKey identifies an action for repeat detection: its name and its
// arguments with keys sorted and spacing normalised; the thought is ignored.
func actionKey(a Action) string {
	args := string(a.Args)
	var v any
	if len(a.Args) > 0 && json.Unmarshal(a.Args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = string(b)
		}
	}
	return a.Name + "\x00" + args
}
