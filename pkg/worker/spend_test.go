package worker_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/workspace"
)

// redisStore is a store on the real Redis named by REDFIX_TEST_REDIS_ADDR,
// under a prefix of the test's own that is deleted when it ends; without
// one (outside CI) the in-process server.
func redisStore(t *testing.T) *store.Store {
	t.Helper()
	addr := os.Getenv("REDFIX_TEST_REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("REDFIX_TEST_REDIS_ADDR is not set and CI is: the spend is tested against a real redis-server")
		}
		return newStore(t)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	prefix := fmt.Sprintf("redfix-test:%s:%d", t.Name(), time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+":*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		rdb.Close()
	})
	return store.New(rdb, prefix)
}

// spendingAgent is a scripted agent whose model calls cost spend, and
// which records the budget its episode was given.
type spendingAgent struct {
	scriptedAgent
	spend llm.Spend

	mu      sync.Mutex
	runs    int
	budgets []harness.Budget
}

func (a *spendingAgent) Run(ctx context.Context, ws *workspace.Workspace, t task.Task, traj io.Writer) (harness.Result, error) {
	a.mu.Lock()
	a.runs++
	a.budgets = append(a.budgets, harness.BudgetFrom(ctx))
	a.mu.Unlock()
	res, err := a.scriptedAgent.Run(ctx, ws, t, traj)
	res.Spend = a.spend
	return res, err
}

func (a *spendingAgent) count() (int, []harness.Budget) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs, append([]harness.Budget(nil), a.budgets...)
}

const judgeAccepts = `{"acceptable": true, "reason": "Restores the inclusive minimum the blame commit dropped."}`

// The judge's calls are metered into the task's spend; the task's spend is
// added to its repository's day in the store; once the day's budget is
// spent, the next task of that repository is refused with the reason, and
// the agent does not run.
func TestSpendIsChargedAndTheDailyBudgetRefuses(t *testing.T) {
	t.Parallel()
	s := sample(t)
	ctx := context.Background()
	st := redisStore(t)
	agent := &spendingAgent{
		scriptedAgent: scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true},
		spend:         llm.Spend{Calls: 4, Usage: llm.Usage{PromptTokens: 40000, CachedTokens: 30000, CompletionTokens: 2000}, CostUSD: 0.30},
	}
	r := newRig(t, agent)
	srv := llmtest.NewServer(t, llmtest.Reply{Content: judgeAccepts})
	price := llm.Price{Input: 2, Output: 10}
	r.pipeline.Judge = judge.NewCommittee(llm.NewMeter(srv.LLM("judge-model"), price), 1, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)))
	r.pipeline.Spending = st
	r.pipeline.Model = "judge-model"
	r.pipeline.RepoDaily = harness.Budget{CostUSD: 0.5}
	r.pipeline.FeedbackRounds = 1

	out, err := repair(t, r.pipeline, demoTask(s, "fp-spend-1"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != task.StatusPublished {
		t.Fatalf("status %s (%s), want published; gates %+v", out.Status, out.Reason, out.Gates)
	}
	// The agent's 4 calls and the judge's one, as the server counted it.
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the judge made %d calls, want 1", len(reqs))
	}
	judgeIn, judgeOut := 100, 10 // the first answer's usage
	if out.Spend.Calls != 5 || out.Spend.PromptTokens != 40000+judgeIn || out.Spend.CompletionTokens != 2000+judgeOut {
		t.Errorf("the task's spend = %+v, want the agent's and the judge's", out.Spend)
	}
	judgeCost := (float64(judgeIn)*price.Input + float64(judgeOut)*price.Output) / 1e6
	if math.Abs(out.Spend.CostUSD-(0.30+judgeCost)) > 1e-9 {
		t.Errorf("the task's cost = %v, want %v", out.Spend.CostUSD, 0.30+judgeCost)
	}
	// The episode was given its share of what was left of the day: one
	// candidate, one feedback round.
	if _, budgets := agent.count(); len(budgets) != 1 || math.Abs(budgets[0].CostUSD-0.25) > 1e-9 || budgets[0].Scope == "" {
		t.Errorf("the episode's budget = %+v, want $0.25 of the repository's daily budget", budgets)
	}
	day, err := st.RepoSpend(ctx, s.Dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if day.Tokens != out.Spend.Total() || math.Abs(day.CostUSD-out.Spend.CostUSD) > 1e-9 {
		t.Errorf("the repository's day = %+v, want the task's %+v", day, out.Spend)
	}

	// Another task of the same repository with $0.30 of $0.50 spent: it
	// runs on what is left.
	r.pipeline.RepoDaily = harness.Budget{CostUSD: 0.30}
	out, err = repair(t, r.pipeline, demoTask(s, "fp-spend-2"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("refused: the repository's daily budget is spent ($%.4f of $0.3000 today, UTC)", day.CostUSD)
	if out.Status != task.StatusOverBudget || out.Reason != want {
		t.Fatalf("over budget: %s (%s), want %s (%s)", out.Status, out.Reason, task.StatusOverBudget, want)
	}
	if runs, _ := agent.count(); runs != 1 {
		t.Errorf("the agent ran %d times; a refused task must not run it", runs)
	}
	// A token budget refuses too, and another repository is not held back.
	r.pipeline.RepoDaily = harness.Budget{Tokens: day.Tokens}
	if out, err = repair(t, r.pipeline, demoTask(s, "fp-spend-3")); err != nil || out.Status != task.StatusOverBudget || !strings.Contains(out.Reason, "tokens today") {
		t.Errorf("token budget: %s (%s), %v", out.Status, out.Reason, err)
	}
	if err := st.AddRepoSpend(ctx, "elsewhere", time.Now(), 1, 0); err != nil {
		t.Fatal(err)
	}
	if left, err := st.RepoSpend(ctx, "elsewhere", time.Now()); err != nil || left.Tokens != 1 {
		t.Errorf("another repository's day = %+v, %v", left, err)
	}
}

// The consumer records each attempt's spend on the task, where the task
// API shows it.
func TestConsumerRecordsTheTaskSpend(t *testing.T) {
	t.Parallel()
	s := sample(t)
	st := redisStore(t)
	q := openQueue(t, queue.Config{AckWait: 30 * time.Second, MaxDeliver: 3})
	agent := &spendingAgent{
		scriptedAgent: scriptedAgent{edits: []edit{fixDiscount}, testsPassed: true},
		spend:         llm.Spend{Calls: 2, Usage: llm.Usage{PromptTokens: 3000, CachedTokens: 1000, CompletionTokens: 300}, CostUSD: 0.02},
	}
	r := newRig(t, agent)
	r.store = st
	r.pipeline.Ledger = st
	r.pipeline.Model = "m-1"
	srv := llmtest.NewServer(t, llmtest.Reply{Content: judgeAccepts})
	r.pipeline.Judge = judge.NewCommittee(llm.NewMeter(srv.LLM("m-1"), llm.Price{Input: 1, Output: 1}), 1, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)))
	tk := demoTask(s, "fp-consumer-spend")
	enqueue(t, q, tk)
	c := consumer(t, q, r)
	c.Spends = st
	startConsumer(t, c)

	got := waitStatus(t, r, tk.ID, task.StatusPublished)
	want := task.Spend{Model: "m-1", Calls: 3, InputTokens: 3000 + 100, CachedTokens: 1000, OutputTokens: 300 + 10}
	if got.Spend == nil || got.Spend.Model != want.Model || got.Spend.Calls != want.Calls || got.Spend.InputTokens != want.InputTokens ||
		got.Spend.CachedTokens != want.CachedTokens || got.Spend.OutputTokens != want.OutputTokens || math.Abs(got.Spend.CostUSD-(0.02+110e-6)) > 1e-9 {
		t.Errorf("the task's spend = %+v, want %+v and $%v", got.Spend, want, 0.02+110e-6)
	}
}
