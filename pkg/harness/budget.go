package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/workspace"
)

// Budget bounds what an episode may spend beyond its steps; a zero field is
// no limit. The pipeline gives each episode what is left of its task's
// budget.
type Budget struct {
	Tokens  int
	CostUSD float64
	Wall    time.Duration
	// Scope names the budget in the reason an episode stops ("the
	// repository's daily budget"); empty for the task's own.
	Scope string
}

type budgetKey struct{}

// WithBudget bounds the episodes run with ctx by b as well as by their
// configured budget: whichever runs out first ends the episode.
func WithBudget(ctx context.Context, b Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom is the budget WithBudget put in ctx, zero when none.
func BudgetFrom(ctx context.Context) Budget {
	b, _ := ctx.Value(budgetKey{}).(Budget)
	return b
}

// Meter reports what the model calls of an episode have spent so far
// (llm.Meter is one: the policy and the patcher share it).
type Meter interface {
	Spent() llm.Spend
}

// exhausted says which budget is spent, "" when none is.
func (b Budget) exhausted(spent llm.Spend, elapsed time.Duration) string {
	what := func(kind string) string {
		if b.Scope != "" {
			return fmt.Sprintf("the %s budget (%s) is spent", kind, b.Scope)
		}
		return fmt.Sprintf("the %s budget is spent", kind)
	}
	switch {
	case b.Tokens > 0 && spent.Total() >= b.Tokens:
		return fmt.Sprintf("%s (%d of %d tokens)", what("token"), spent.Total(), b.Tokens)
	case b.CostUSD > 0 && spent.CostUSD >= b.CostUSD:
		return fmt.Sprintf("%s ($%.4f of $%.4f)", what("cost"), spent.CostUSD, b.CostUSD)
	case b.Wall > 0 && elapsed >= b.Wall:
		return fmt.Sprintf("%s (%s of %s)", what("wall-time"), elapsed.Round(time.Second), b.Wall)
	}
	return ""
}

// spent is the episode's meter reading, zero without a meter.
func (h *Harness) spent() llm.Spend {
	if h.cfg.Meter == nil {
		return llm.Spend{}
	}
	return h.cfg.Meter.Spent()
}

// restorePassing puts the workspace back to patch, the last state in which
// the oracle tests passed, so that the gates check what the result says.
func restorePassing(ctx context.Context, ws *workspace.Workspace, patch string) error {
	if err := ws.Reset(ctx); err != nil {
		return fmt.Errorf("reset to %s: %w", ws.Commit, err)
	}
	if patch == "" {
		return nil
	}
	if out, err := ws.Apply(ctx, patch); err != nil {
		return fmt.Errorf("apply the passing patch: %w: %s", err, out)
	}
	return nil
}
