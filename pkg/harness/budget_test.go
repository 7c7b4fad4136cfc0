package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/llm"
)

// fakeMeter is charged by the test's policy, as a metered client would be
// by each model call.
type fakeMeter struct {
	mu sync.Mutex
	s  llm.Spend
}

func (m *fakeMeter) Spent() llm.Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s
}

func (m *fakeMeter) charge(in, out int, cost float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s = m.s.Add(llm.Spend{Calls: 1, Usage: llm.Usage{PromptTokens: in, CompletionTokens: out}, CostUSD: cost})
}

// TestBudgetKeepsTheBestPassingState: the agent fixes the bug, sees the
// tests pass, then breaks the code again; the token budget ends the episode
// and the passing state is what the result (and the workspace) hold.
func TestBudgetKeepsTheBestPassingState(t *testing.T) {
	f := harnesstest.Calc(t)
	m := &fakeMeter{}
	breakBlocks := "<<<<<<< SEARCH\n\treturn a + b\n=======\n\treturn a * b\n>>>>>>> REPLACE\n"
	noMatch := "<<<<<<< SEARCH\n\treturn a / b\n=======\n\treturn 0\n>>>>>>> REPLACE\n"
	p := &script{
		actions: []Action{
			NewAction(tools.Edit, "fix", tools.EditArgs{Path: "calc/calc.go", Blocks: fixBlocks}),
			NewAction(tools.RunTests, "check", tools.RunTestsArgs{}),
			NewAction(tools.Edit, "tidy", tools.EditArgs{Path: "calc/calc.go", Blocks: breakBlocks}),
			NewAction(tools.Edit, "more", tools.EditArgs{Path: "calc/calc.go", Blocks: noMatch}),
			NewAction(tools.RunTests, "never reached", tools.RunTestsArgs{}),
		},
		hook: func(context.Context, int) error { m.charge(900, 100, 0.01); return nil },
	}
	h := New(Config{Budget: Budget{Tokens: 3500}, Meter: m}, p, harnesstest.Go(), nil, zaptest.NewLogger(t))
	var traj bytes.Buffer
	res, err := h.Run(context.Background(), f.WS, f.Task, &traj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopBudget || res.Steps != 4 || !strings.Contains(res.Summary, "token budget") {
		t.Fatalf("Result = %+v", res)
	}
	if !res.TestsPassed || !res.KeptPassing || !strings.Contains(res.Patch, "+\treturn a + b") || strings.Contains(res.Patch, "a * b") {
		t.Fatalf("the passing state was not kept: %+v\n%s", res, res.Patch)
	}
	got, err := os.ReadFile(filepath.Join(f.WS.Dir, "calc/calc.go"))
	if err != nil || !strings.Contains(string(got), "return a + b") || strings.Contains(string(got), "a * b") {
		t.Fatalf("the workspace does not hold the passing state:\n%s", got)
	}
	if res.Edits != 3 || res.EditFailures != 1 {
		t.Errorf("edits %d, failures %d; want 3 and 1", res.Edits, res.EditFailures)
	}
	if res.Spend.Calls != 4 || res.Spend.Total() != 4000 || res.Spend.CostUSD < 0.0399 {
		t.Errorf("Spend = %+v", res.Spend)
	}
	steps := readTrajectory(t, traj.Bytes())
	for i, st := range steps {
		if st.Spend == nil || st.Spend.Calls != 1 || st.Spend.PromptTokens != 900 || st.Spend.CompletionTokens != 100 {
			t.Errorf("step %d spend = %+v", i+1, st.Spend)
		}
	}
}

func TestBudgetExhausted(t *testing.T) {
	b := Budget{Tokens: 100, CostUSD: 1, Wall: time.Minute}
	for _, tt := range []struct {
		spent   llm.Spend
		elapsed time.Duration
		want    string
	}{
		{llm.Spend{Usage: llm.Usage{PromptTokens: 50}, CostUSD: 0.5}, time.Second, ""},
		{llm.Spend{Usage: llm.Usage{PromptTokens: 60, CompletionTokens: 40}}, 0, "token budget"},
		{llm.Spend{CostUSD: 1.2}, 0, "cost budget"},
		{llm.Spend{}, 2 * time.Minute, "wall-time budget"},
	} {
		got := b.exhausted(tt.spent, tt.elapsed)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("exhausted(%+v, %v) = %q, want %q", tt.spent, tt.elapsed, got, tt.want)
		}
	}
	if (Budget{}).exhausted(llm.Spend{Usage: llm.Usage{PromptTokens: 1 << 30}, CostUSD: 1e6}, time.Hour) != "" {
		t.Error("a zero budget has no limit")
	}
}

// A budget put in the context (the repository's daily budget) ends the
// episode when it is tighter than the configured one, and says so.
func TestContextBudgetEndsTheEpisode(t *testing.T) {
	f := harnesstest.Calc(t)
	m := &fakeMeter{}
	p := &script{
		actions: []Action{
			NewAction(tools.ReadFile, "look", tools.ReadDirectoryArgs{Path: "calc/calc.go"}),
			NewAction(tools.ReadFile, "look again", tools.ReadDirectoryArgs{Path: "calc/calc_test.go"}),
			NewAction(tools.ReadFile, "never reached", tools.ReadDirectoryArgs{Path: "strs/strs.go"}),
		},
		hook: func(context.Context, int) error { m.charge(0, 0, 0.5); return nil },
	}
	h := New(Config{Budget: Budget{CostUSD: 10}, Meter: m}, p, harnesstest.Go(), nil, zaptest.NewLogger(t))
	ctx := WithBudget(context.Background(), Budget{CostUSD: 1, Scope: "the repository's daily budget"})
	res, err := h.Run(ctx, f.WS, f.Task, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "stopped: the cost budget (the repository's daily budget) is spent ($1.0000 of $1.0000)"
	if res.Stop != StopBudget || res.Steps != 2 || res.Summary != want {
		t.Fatalf("Result: stop %q, %d steps, %q; want %q after 2 steps", res.Stop, res.Steps, res.Summary, want)
	}
}
