package harness_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/harnesstest"
	"github.com/redfix/redfix/pkg/harness/llmpolicy"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

// A tool of this test's own, made as the registered ones are: its argument
// struct (the model's schema), its description and its handler. This and
// the line that adds it to a harness's tools are all it takes.

// countFailuresArgs are count_failures' arguments.
type countFailuresArgs struct {
	Containing string `json:"containing,omitempty" description:"Count only the tests whose id contains this text."`
}

var countFailures = tools.Define("count_failures", tools.KindOther,
	"Count the task's failing {{.Lang}} tests, or those whose id contains a text.",
	func(s *tools.Session, _ context.Context, a countFailuresArgs) (tools.Observation, error) {
		n := 0
		for _, f := range s.Task().Failures {
			if strings.Contains(f.ID(), a.Containing) {
				n++
			}
		}
		return tools.Observation{Content: fmt.Sprintf("%d failing test(s) contain %q.", n, a.Containing)}, nil
	})

// TestANewTool runs an episode whose model calls a tool registered by one
// line: the model is offered it with the schema of its argument struct, the
// loop runs it, and its observation comes back to the model.
func TestANewTool(t *testing.T) {
	f := harnesstest.Calc(t)
	srv := llmtest.NewServer(t,
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "count_failures", Arguments: `{"containing":"TestAdd"}`}}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c2", Name: tools.Exit, Arguments: `{"summary":"counted"}`}}},
	)
	h := harness.New(harness.Config{}, llmpolicy.New(srv.LLM("m"), nil), harnesstest.Go(), nil, zaptest.NewLogger(t)).
		WithTools(append(tools.All(), countFailures))
	res, err := h.Run(context.Background(), f.WS, f.Task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != harness.StopExit || res.Steps != 2 || res.Summary != "counted" {
		t.Fatalf("Result = %+v", res)
	}
	if got := res.History[0].Observation.Content; got != `1 failing test(s) contain "TestAdd".` {
		t.Errorf("observation %q", got)
	}
	reqs := srv.Requests()
	offered := reqs[0].Tools
	if len(offered) != len(tools.All())+1 {
		t.Fatalf("%d tools offered, want the registered ones and count_failures", len(offered))
	}
	last := offered[len(offered)-1].Function
	wantParams := map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{"containing": map[string]any{"type": "string", "description": "Count only the tests whose id contains this text."}},
	}
	if last.Name != "count_failures" || last.Description != "Count the task's failing Go tests, or those whose id contains a text." ||
		!reflect.DeepEqual(last.Parameters, wantParams) {
		t.Errorf("count_failures offered as %+v", last)
	}
	if answer := reqs[1].Messages[3]; answer.Role != "tool" || answer.ToolCallID != "c1" || !strings.Contains(answer.Text(), `1 failing test(s) contain "TestAdd".`) {
		t.Errorf("the model got back %s %s %q", answer.Role, answer.ToolCallID, answer.Text())
	}
}
