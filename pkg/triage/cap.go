package triage

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/task"
)

// newFirst orders a report's groups for the cap on groups per report: when
// there are more than the cap, those that another task holds go after the
// others, each part in the report's order. A group this report's earlier
// delivery claimed is not another task's. The store is asked until the cap
// is filled; a store that cannot tell leaves the order as it is.
func (p *process) newFirst(ctx context.Context, groups []Group) []Group {
	limit := p.t.cfg.MaxGroupsPerReport
	c, ok := p.t.store.(groupClaims)
	if !ok || len(groups) <= limit {
		return groups
	}
	var fresh, held []Group
	for i, g := range groups {
		if len(fresh) == limit {
			// The rest go beyond the cap, whoever holds them.
			return append(append(fresh, groups[i:]...), held...)
		}
		owner, _, claimed, err := c.GroupClaim(ctx, g.Fingerprint)
		if err == nil && claimed && owner != taskID(p.in, g.Fingerprint, p.t.now()) {
			held = append(held, g)
			continue
		}
		// A store that fails here fails again when the group is
		// claimed, which is an error of the report's triage.
		fresh = append(fresh, g)
	}
	return append(fresh, held...)
}

// beyondCapShown is how many of the groups beyond the cap the dropped
// task lists (a failure of each).
const beyondCapShown = 10

// beyondCap records the groups left when the cap on groups per report is
// reached: one dropped task that says how many there are and lists the
// first of them. Their groups are not claimed, so that the failures are
// triaged when a later report has room for them.
func (p *process) beyondCap(ctx context.Context, rest []Group, log *zap.Logger) (Outcome, error) {
	t, in := p.t, p.in
	id := taskID(in, "beyond the cap", t.now())
	failures := 0
	for _, g := range rest {
		failures += len(g.Failures)
	}
	reason := fmt.Sprintf("the report has %d more failing groups (%d failures) beyond the cap of %d per report: not triaged (triage.max_groups_per_report)",
		len(rest), failures, t.cfg.MaxGroupsPerReport)
	tk := task.Task{ID: id, Repo: in.Repo, Commit: in.Commit, Branch: in.Branch, Status: task.StatusDropped, Reason: reason,
		CreatedAt: t.now().UTC(), UpdatedAt: t.now().UTC()}
	out := Outcome{TaskID: id, Status: task.StatusDropped, Reason: reason, Task: &tk}
	for _, g := range rest[:min(len(rest), beyondCapShown)] {
		tk.Failures = append(tk.Failures, g.Failures[0])
		out.Tests = append(out.Tests, g.Failures[0].ID())
	}
	if err := t.store.SaveTask(ctx, tk); err != nil {
		return out, fmt.Errorf("save dropped task %s: %w", id, err)
	}
	log.Warn("dropped the groups beyond the cap", zap.String("task_id", id), zap.Int("groups", len(rest)), zap.Int("failures", failures),
		zap.Int("cap", t.cfg.MaxGroupsPerReport))
	return out, nil
}
