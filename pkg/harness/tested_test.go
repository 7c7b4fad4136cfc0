package harness

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/harness/tools"
)

// swapBlock is an edit of calc.go's Add: its body from one line to another.
func swapBlock(from, to string) string {
	const fn = "func Add(a, b int) int {\n\treturn "
	return "<<<<<<< SEARCH\n" + fn + from + "\n=======\n" + fn + to + "\n>>>>>>> REPLACE\n"
}

// TestRunCountsPatchesTested: the episode's result counts the candidate
// patches run_tests tested (distinct workspace states after an edit) and
// how many came before the final one, whatever the policy; a run with no
// edit before it, a state tested again and an edit never tested are not
// counted.
func TestRunCountsPatchesTested(t *testing.T) {
	f := harnesstest.Calc(t)
	edit := func(from, to string) Action {
		return NewAction(tools.Edit, "", tools.EditArgs{Path: "calc/calc.go", Blocks: swapBlock(from, to)})
	}
	run := NewAction(tools.RunTests, "", tools.RunTestsArgs{})
	p := &script{actions: []Action{
		NewAction(tools.RunTests, "reproduce", tools.RunTestsArgs{}), // no edit: no candidate
		edit("a - b", "a * b"), run, // candidate 1
		edit("a * b", "b - a"), run, // candidate 2
		edit("b - a", "a - b"),      // back to the commit: nothing to count
		edit("a - b", "a * b"), run, // candidate 1 again: not counted twice
		edit("a * b", "a / b"),      // never tested
		edit("a / b", "a + b"), run, // candidate 3: the fix
		NewAction(tools.RunTests, "the tests around it", tools.RunTestsArgs{Tests: []string{"TestAdd", "TestSub"}}),
	}}
	res, err := New(Config{MaxRepeats: 5}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TestsPassed || res.Stop != StopExit {
		t.Fatalf("Result = %+v", res)
	}
	if res.PatchesTested != 3 || res.TriedBefore != 2 {
		t.Errorf("patches tested %d, tried before the final one %d; want 3 and 2", res.PatchesTested, res.TriedBefore)
	}
}

// TestRunCountsPatchesTestedWithoutAFix: an episode that ends with no patch
// tried every patch it tested before its (empty) answer.
func TestRunCountsPatchesTestedWithoutAFix(t *testing.T) {
	f := harnesstest.Calc(t)
	p := &script{actions: []Action{
		NewAction(tools.Edit, "", tools.EditArgs{Path: "calc/calc.go", Blocks: swapBlock("a - b", "a * b")}),
		NewAction(tools.RunTests, "", tools.RunTestsArgs{}),
		NewAction(tools.Edit, "", tools.EditArgs{Path: "calc/calc.go", Blocks: swapBlock("a * b", "a - b")}),
	}}
	res, err := New(Config{}, p, harnesstest.Go(), nil, zaptest.NewLogger(t)).Run(context.Background(), f.WS, f.Task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Patch != "" || res.PatchesTested != 1 || res.TriedBefore != 1 {
		t.Errorf("patch %q, patches tested %d, tried before %d; want none, 1 and 1", res.Patch, res.PatchesTested, res.TriedBefore)
	}
}
