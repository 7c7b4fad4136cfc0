package harness

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// PolicyGates names the gates in the trajectory, on the step that brings
// their evidence back to the agent.
const PolicyGates = "gates"

// Revise runs a feedback round: the episode of prior continues in ws (which
// still holds the rejected candidate) after one more step, in which the
// gates' evidence comes back as a failed test run, so that any policy sees
// it as an observation (which gate, which test failed, and how). The round
// gets a step budget of its own; its steps, the evidence's included, are
// written to trajectory.
func (h *Harness) Revise(ctx context.Context, ws *workspace.Workspace, t task.Task, prior []Step, evidence string, trajectory io.Writer) (Result, error) {
	n := len(prior) + 1
	fb := Step{
		N:      n,
		Policy: PolicyGates,
		Action: Action{
			Name:    tools.RunTests,
			Args:    json.RawMessage("{}"),
			Thought: "The gates checked the candidate before publishing it and rejected it.",
			CallID:  "gates_" + strconv.Itoa(n),
		},
		Observation: tools.Observation{IsError: true, Content: "The candidate was rejected by the gates; fix what they found, then run the tests again and exit.\n\n" + evidence},
	}
	if trajectory != nil {
		line, err := json.Marshal(fb)
		if err != nil {
			return Result{}, err
		}
		if _, err := trajectory.Write(append(line, '\n')); err != nil {
			return Result{}, err
		}
	}
	return h.run(ctx, ws, t, append(append([]Step(nil), prior...), fb), trajectory)
}
