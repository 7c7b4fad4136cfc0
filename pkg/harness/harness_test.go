package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/harness/tools"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// script is a policy that takes a fixed sequence of actions, then exits. A
// hook, when set, runs before each action is returned.
type script struct {
	actions []Action
	next    int
	hook    func(ctx context.Context, n int) error
	seen    []int // len(ep.Steps) at each call
}

func (p *script) Name() string { return "script" }

func (p *script) Next(ctx context.Context, ep *Episode) (Action, error) {
	p.seen = append(p.seen, len(ep.Steps))
	if p.hook != nil {
		if err := p.hook(ctx, p.next); err != nil {
			return Action{}, err
		}
	}
	if p.next >= len(p.actions) {
		return NewAction(tools.Exit, "done", tools.ExitArgs{Summary: "script ended"}), nil
	}
	a := p.actions[p.next]
	p.next++
	return a, nil
}

// readTrajectory decodes the JSONL trajectory, one step per line.
func readTrajectory(t *testing.T, data []byte) []Step {
	t.Helper()
	var steps []Step
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var st Step
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatalf("trajectory line %d is not a JSON step: %v\n%s", len(steps)+1, err, sc.Text())
		}
		if st.N != len(steps)+1 || st.Policy != "script" || st.Started.IsZero() {
			t.Errorf("trajectory line %d = %+v", len(steps)+1, st)
		}
		steps = append(steps, st)
	}
	return steps
}

const fixBlocks = "<<<<<<< SEARCH\nfunc Add(a, b int) int {\n\treturn a - b\n}\n=======\nfunc Add(a, b int) int {\n\treturn a + b\n}\n>>>>>>> REPLACE\n"

func TestRunFixes(t *testing.T) {
	f := harnesstest.Calc(t)
	core, logs := observer.New(zapcore.DebugLevel)
	p := &script{actions: []Action{
		NewAction(tools.GetTaskDetails, "what failed?", nil),
		NewAction(tools.SearchMethod, "where is Add?", tools.SearchMethodArgs{Name: "Add"}),
		NewAction(tools.RunTests, "reproduce", tools.RunTestsArgs{}),
		NewAction(tools.Edit, "fix the sign", tools.EditArgs{Path: "calc/calc.go", Blocks: fixBlocks}),
		NewAction(tools.RunTests, "check", tools.RunTestsArgs{}),
		NewAction(tools.Exit, "done", tools.ExitArgs{Summary: "Add subtracted; it adds again."}),
	}}
	h := New(Config{}, p, harnesstest.Go(), nil, zap.New(core))
	var traj bytes.Buffer
	res, err := h.Run(context.Background(), f.WS, f.Task, &traj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopExit || res.Steps != 6 || !res.TestsPassed || res.Summary != "Add subtracted; it adds again." {
		t.Fatalf("Result = %+v", res)
	}
	if !strings.Contains(res.Patch, "+\treturn a + b") || !strings.Contains(res.Patch, "-\treturn a - b") {
		t.Fatalf("Patch =\n%s", res.Patch)
	}
	steps := readTrajectory(t, traj.Bytes())
	if len(steps) != 6 {
		t.Fatalf("%d trajectory lines, want 6", len(steps))
	}
	if steps[2].Observation.IsError || steps[2].Observation.Tests == nil || steps[2].Observation.Tests.OK {
		t.Errorf("the reproduction step = %+v", steps[2].Observation)
	}
	if steps[3].Observation.Edit == nil || !steps[3].Observation.Edit.Applied || steps[3].Action.Thought != "fix the sign" {
		t.Errorf("the edit step = %+v", steps[3])
	}
	if !reflect.DeepEqual(p.seen, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("the policy saw steps %v", p.seen)
	}
	if n := logs.FilterMessage("step").FilterField(zap.String("task_id", "task-1")).Len(); n != 6 {
		t.Errorf("%d step logs with task_id, want 6", n)
	}
	end := logs.FilterMessage("episode ended").All()
	if len(end) != 1 || end[0].Level != zapcore.InfoLevel || end[0].ContextMap()["stop"] != "exit" || end[0].ContextMap()["repo"] != f.Task.Repo {
		t.Errorf("end log = %+v", end)
	}
}

func TestRunEditAfterPassingTests(t *testing.T) {
	f := harnesstest.Calc(t)
	p := &script{actions: []Action{
		NewAction(tools.Edit, "", tools.EditArgs{Path: "calc/calc.go", Blocks: fixBlocks}),
		NewAction(tools.RunTests, "", tools.RunTestsArgs{Tests: []string{"TestAdd"}}), // the oracle, named
		NewAction(tools.Edit, "", tools.EditArgs{Path: "README.md", Blocks: "<<<<<<< SEARCH\nAdd and Sub.\n=======\nAdd and Sub, fixed.\n>>>>>>> REPLACE\n"}),
	}}
	res, err := New(Config{}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TestsPassed {
		t.Error("TestsPassed though an edit came after the passing run")
	}
	if res.Stop != StopExit || res.Steps != 4 || !strings.Contains(res.Patch, "README.md") {
		t.Errorf("Result = %+v", res)
	}
}

func TestRunBudget(t *testing.T) {
	f := harnesstest.Calc(t)
	var actions []Action
	for i := 1; i <= 10; i++ {
		actions = append(actions, NewAction(tools.GoToLine, "", tools.GoToLineArgs{Path: "calc/calc.go", Line: i}))
	}
	p := &script{actions: actions}
	var traj bytes.Buffer
	res, err := New(Config{MaxSteps: 4}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, &traj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopBudget || res.Steps != 4 || res.Patch != "" || res.TestsPassed {
		t.Errorf("Result = %+v", res)
	}
	if n := len(readTrajectory(t, traj.Bytes())); n != 4 {
		t.Errorf("%d trajectory lines, want 4", n)
	}
}

func TestRunRepeated(t *testing.T) {
	f := harnesstest.Calc(t)
	same := func(thought, args string) Action {
		return Action{Name: tools.ReadFile, Thought: thought, Args: json.RawMessage(args)}
	}
	p := &script{actions: []Action{
		same("a", `{"path": "go.mod"}`),
		NewAction(tools.ReadDirectory, "", tools.ReadDirectoryArgs{}),
		same("b", `{"path": "go.mod"}`),
		same("c", `{"path":"go.mod"}`),                // same args, other spacing and thought
		same("d", `{"start_line":0,"path":"go.mod"}`), // other args
		same("e", `{"path":"go.mod"}`),
		same("f", `{"path":"go.mod"}`),
		same("g", `{"path":"go.mod"}`),
		same("h", `{"path":"go.mod"}`),
	}}
	var traj bytes.Buffer
	res, err := New(Config{MaxRepeats: 3}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, &traj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopRepeated || res.Steps != 8 {
		t.Fatalf("Result = %+v", res)
	}
	steps := readTrajectory(t, traj.Bytes())
	last := steps[len(steps)-1].Observation
	if !last.IsError || !strings.Contains(last.Content, "3 times in a row") {
		t.Errorf("last observation = %+v", last)
	}
	if steps[6].Observation.IsError {
		t.Errorf("the second repeat already stopped: %+v", steps[6].Observation)
	}
}

func TestRunRecoversFromBadActions(t *testing.T) {
	f := harnesstest.Calc(t)
	p := &script{actions: []Action{
		{Name: "open_the_file", Args: json.RawMessage(`{"path":"go.mod"}`)},
		{Name: tools.ReadFile, Args: json.RawMessage(`{"path": 7}`)},
		NewAction(tools.ReadFile, "", tools.ReadFileArgs{Path: "../../etc/passwd"}),
		NewAction(tools.ReadFile, "", tools.ReadFileArgs{Path: "go.mod"}),
	}}
	var traj bytes.Buffer
	res, err := New(Config{}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, &traj)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopExit || res.Steps != 5 || res.Summary != "script ended" {
		t.Fatalf("Result = %+v", res)
	}
	steps := readTrajectory(t, traj.Bytes())
	for i, want := range []string{"Unknown action", "not valid", "outside the workspace"} {
		if o := steps[i].Observation; !o.IsError || !strings.Contains(o.Content, want) {
			t.Errorf("step %d: %+v, want an error observation with %q", i+1, o, want)
		}
	}
	if o := steps[3].Observation; o.IsError || !strings.Contains(o.Content, "module example.com/calc") {
		t.Errorf("step 4: %+v", o)
	}
}

func TestRunTruncatesObservations(t *testing.T) {
	f := harnesstest.Calc(t)
	harnesstest.WriteFiles(t, f.WS.Dir, map[string]string{"big.txt": strings.Repeat("needle in a haystack of text\n", 500)})
	p := &script{actions: []Action{NewAction(tools.SearchCodeInFile, "", tools.SearchCodeInFileArgs{Query: "needle", Path: "big.txt"})}}
	var traj bytes.Buffer
	if _, err := New(Config{OutputLimit: 1000}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, &traj); err != nil {
		t.Fatal(err)
	}
	steps := readTrajectory(t, traj.Bytes())
	c := steps[0].Observation.Content
	if len([]rune(c)) > 1000 || !strings.Contains(c, "characters omitted") || !strings.HasPrefix(c, "500 matches") || !strings.HasSuffix(c, "narrow the query]\n") {
		t.Errorf("observation of %d characters:\n%s", len(c), c)
	}
	// The hits the cut took are not in the structured result either.
	hits := steps[0].Observation.Search
	if hits == nil || len(hits.Hits) == 0 || len(hits.Hits) != strings.Count(c, ": needle in a haystack of text\n") {
		t.Fatalf("Search = %+v for\n%s", hits, c)
	}
	for _, h := range hits.Hits {
		if !strings.Contains(c, fmt.Sprintf("\n%s:%d: %s\n", h.File, h.Line, h.Text)) {
			t.Errorf("hit %+v is not shown", h)
		}
	}
}

func TestRunPolicyError(t *testing.T) {
	f := harnesstest.Calc(t)
	boom := errors.New("model unreachable")
	p := &script{hook: func(_ context.Context, n int) error {
		if n == 1 {
			return boom
		}
		return nil
	}, actions: []Action{NewAction(tools.GetTaskDetails, "", nil), NewAction(tools.GetTaskDetails, "", nil)}}
	res, err := New(Config{}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "policy script at step 2") {
		t.Fatalf("err = %v", err)
	}
	if res.Stop != StopPolicy || res.Steps != 1 {
		t.Errorf("Result = %+v", res)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	f := harnesstest.Calc(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	p := &script{hook: func(ctx context.Context, n int) error {
		calls++
		if n == 2 {
			cancel() // the operator stops the job while the model thinks
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}}
	for i := 0; i < 10; i++ {
		p.actions = append(p.actions, NewAction(tools.GoToLine, "", tools.GoToLineArgs{Path: "calc/calc.go", Line: i + 1}))
	}
	var traj bytes.Buffer
	res, err := New(Config{}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(ctx, f.WS, f.Task, &traj)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Steps != 2 || calls != 3 {
		t.Errorf("Result = %+v after %d policy calls", res, calls)
	}
	if n := len(readTrajectory(t, traj.Bytes())); n != 2 {
		t.Errorf("%d trajectory lines, want 2", n)
	}

	// A context that ends during a tool stops the loop too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	p2 := &script{actions: []Action{NewAction(tools.RunTests, "", tools.RunTestsArgs{})}, hook: func(context.Context, int) error {
		cancel2()
		return nil
	}}
	_, err = New(Config{}, p2, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(ctx2, f.WS, f.Task, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
