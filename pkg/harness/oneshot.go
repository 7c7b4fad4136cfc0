package harness

import (
	"context"
	"fmt"

	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// Execute runs one action in ws exactly as a step of an episode of t would
// (same tools, same confinement to the workspace, same output cap) and
// returns the observation the policy would get. It is for people: `worker
// tool` shows an on-call engineer what the agent saw.
func (h *Harness) Execute(ctx context.Context, ws *workspace.Workspace, t task.Task, a Action) (tools.Observation, error) {
	s := h.session(ws, t)
	defer s.Close()
	obs, err := s.Execute(ctx, a.Name, a.Args)
	if err != nil {
		return obs, fmt.Errorf("%s: %w", a.Name, err)
	}
	obs.Clip(h.cfg.OutputLimit)
	return obs, nil
}
