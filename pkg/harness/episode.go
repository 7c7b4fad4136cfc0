package harness

import (
	"context"
	"time"

	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/task"
)

// Step is one line of the trajectory.
type Step struct {
	N           int               `json:"step"`
	Policy      string            `json:"policy"`
	Action      Action            `json:"action"`
	Observation tools.Observation `json:"observation"`
	Started     time.Time         `json:"started"`
	ElapsedMS   int64             `json:"elapsed_ms"`
	// Spend is what the step's model calls (the policy's, the patcher's)
	// used and cost; absent when it made none.
	Spend *llm.Spend `json:"spend,omitempty"`
}

// Episode is what a policy sees: the task, the tools, and every step so far.
type Episode struct {
	Task  task.Task
	Tools []tools.Spec
	// Words are the repository's language's words (its driver's, or
	// neutral ones), for what a policy says beside the tools.
	Words    tools.Words
	Steps    []Step
	MaxSteps int
}

// Policy chooses the next action.
type Policy interface {
	Name() string
	Next(ctx context.Context, ep *Episode) (Action, error)
}

// Result is how an episode ended.
type Result struct {
	// Patch is the workspace's diff against the task's commit; empty when
	// the agent changed nothing.
	Patch   string `json:"patch"`
	Summary string `json:"summary"`
	Steps   int    `json:"steps"`
	// Stop is why the loop ended: "exit", "budget", "repeated", "policy".
	Stop string `json:"stop"`
	// TestsPassed reports whether the last run_tests of the oracle tests
	// passed with the patch as it stands.
	TestsPassed bool `json:"tests_passed"`
	// KeptPassing: a budget ended the episode after the agent changed a
	// state that passed; Patch is that state, restored in the workspace.
	KeptPassing bool `json:"kept_passing,omitempty"`
	// RevertPasses: the agent found no fix, but undoing the blame commit's
	// change made the failing tests pass; an answer worth a revert, told
	// apart from finding nothing (the agent's word, checked where it is
	// counted: bench scores the revert itself).
	RevertPasses bool `json:"revert_passes,omitempty"`
	// Edits and EditFailures count edit actions, and those that did not
	// apply (a SEARCH that matched nothing, a bad block).
	Edits        int `json:"edits"`
	EditFailures int `json:"edit_failures"`
	// PatchesTested counts the candidate patches the episode tested: the
	// distinct states of the workspace, each a change from the task's
	// commit, that run_tests ran on after an edit. TriedBefore are those
	// tested before the final patch was first tested (all of them when the
	// episode ends with no patch, or with one it never tested): how far
	// down its list of hypotheses the agent found its answer.
	PatchesTested int `json:"patches_tested"`
	TriedBefore   int `json:"tried_before"`
	// Spend is what the episode's model calls used and cost.
	Spend llm.Spend `json:"spend"`
	// History is every step of the episode, earlier rounds' included, for
	// a feedback round to continue from.
	History []Step `json:"-"`
}

// Kind is what the named tool's observations tell (tools.Kind), as the
// episode's tools say; tools.KindOther for a name none has.
func (ep *Episode) Kind(name string) tools.Kind { return tools.KindOf(ep.Tools, name) }
