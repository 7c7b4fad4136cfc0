package llmpolicy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/llmpolicy"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

func TestTextReActFormat(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: "Thought: reproduce first.\nAction: run_tests\nArguments: {}"},
		llmtest.Reply{Content: "The frame says calc.go.\n**Action:** read_file\nArguments:\n```json\n{\"path\": \"calc.go\",\n \"start_line\": 1}\n```\n"},
		llmtest.Reply{Content: "Action: edit\nArguments: {\"path\": \"calc.go\", \"blocks\": "},
		llmtest.Reply{Content: "I am done: Add no longer adds one."},
	)
	pol := llmpolicy.NewWithOptions(srv.LLM("small"), llmpolicy.Options{TextTools: true}, nil)
	ep := &harness.Episode{Task: testTask(), Tools: testTools(), Words: tools.Words{Example: "shop/pricing.rs"}, MaxSteps: 10}
	var got []harness.Action
	for i := 0; i < 4; i++ {
		a, err := pol.Next(context.Background(), ep)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
		ep.Steps = append(ep.Steps, harness.Step{N: i + 1, Action: a, Observation: tools.Observation{Content: fmt.Sprintf("result %d", i+1)}})
	}
	want := []struct{ name, args, thought string }{
		{"run_tests", `{}`, "reproduce first."},
		{"read_file", `{"path": "calc.go",
 "start_line": 1}`, "The frame says calc.go."},
		{"edit", mustJSON(t, `{"path": "calc.go", "blocks":`), ""},
		{"exit", `{"summary":"I am done: Add no longer adds one."}`, "I am done: Add no longer adds one."},
	}
	for i, w := range want {
		if got[i].Name != w.name || string(got[i].Args) != w.args || got[i].Thought != w.thought {
			t.Errorf("action %d = {%s %s %q}, want {%s %s %q}", i+1, got[i].Name, got[i].Args, got[i].Thought, w.name, w.args, w.thought)
		}
	}
	reqs := srv.Requests()
	last := reqs[3]
	if len(last.Tools) != 0 {
		t.Errorf("text format sent %d native tools", len(last.Tools))
	}
	sys := last.Messages[0].Text()
	// The example is in the repository's language: its driver's words.
	for _, s := range []string{"Action: <tool name>", "- read_file: Read a file.", "path (string): ", "tests (array, optional)",
		"points at shop/pricing.rs line 7", `Arguments: {"path": "shop/pricing.rs", "line": 7}`} {
		if !strings.Contains(sys, s) {
			t.Errorf("system prompt lacks %q", s)
		}
	}
	if m := last.Messages[2]; m.Role != "assistant" || m.Text() != "Thought: reproduce first.\nAction: run_tests\nArguments: {}" {
		t.Errorf("replayed call = %s %q", m.Role, m.Text())
	}
	if m := last.Messages[3]; m.Role != "user" || !strings.HasPrefix(m.Text(), "Observation:\n<data label=\"run_tests output\">\nresult 1") {
		t.Errorf("replayed observation = %s %q", m.Role, m.Text())
	}
}

// longEpisode is an episode of n steps, each reading a large file.
func longEpisode(n int) *harness.Episode {
	ep := &harness.Episode{Task: testTask(), Tools: testTools(), MaxSteps: 100}
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("f%d.go", i%5)
		a := harness.NewAction(tools.ReadFile, "look", tools.ReadFileArgs{Path: path})
		body := strings.Repeat(fmt.Sprintf("line of %s step %d\n", path, i+1), 400)
		ep.Steps = append(ep.Steps, harness.Step{N: i + 1, Action: a, Observation: tools.Observation{Content: body}})
	}
	return ep
}

func TestCondensesNearTheWindow(t *testing.T) {
	ep := longEpisode(12)
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "done"})
	pol := llmpolicy.NewWithOptions(srv.LLM("m"), llmpolicy.Options{ContextWindow: 32000}, nil)
	if _, err := pol.Next(context.Background(), ep); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	size := 0
	for _, m := range msgs {
		size += len(m.Text())
	}
	if size/3 > 32000*3/4 {
		t.Errorf("the prompt is still about %d tokens for a window of 32000", size/3)
	}
	if msgs[1].Text() != llmpolicy.Conversation(ep)[1].Content {
		t.Error("the task message must stay whole")
	}
	var condensed, whole []int
	for i := 0; i < 12; i++ {
		text := msgs[3+2*i].Text()
		if strings.HasPrefix(text, "[condensed") {
			condensed = append(condensed, i+1)
			if !strings.Contains(text, "read_file returned 401 line(s)") {
				t.Errorf("step %d condensed to %q", i+1, text)
			}
		} else if strings.Contains(text, "[…") {
			t.Errorf("step %d was cut, not condensed or kept", i+1)
		} else {
			whole = append(whole, i+1)
		}
	}
	// Oldest first, only as much as needed; the last four steps stay
	// whole, and so does the latest view of each file (steps 8..12 hold
	// the latest views of f0..f4).
	if len(condensed) == 0 || condensed[0] != 1 || condensed[len(condensed)-1] >= 8 ||
		len(whole) < 5 || fmt.Sprint(whole[len(whole)-5:]) != fmt.Sprint([]int{8, 9, 10, 11, 12}) {
		t.Errorf("condensed %v, whole %v; want steps 8-12 whole, the oldest condensed", condensed, whole)
	}
	// No window: nothing condensed.
	for _, m := range llmpolicy.Conversation(ep) {
		if strings.HasPrefix(m.Content, "[condensed") {
			t.Fatal("condensed without a window")
		}
	}
}

func TestContextLengthErrorCondensesAndRetries(t *testing.T) {
	tooLong := llmtest.Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 30000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`}
	srv := llmtest.NewServer(t, tooLong, llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c", Name: "run_tests", Arguments: "{}"}}})
	pol := llmpolicy.New(srv.LLM("m"), nil) // the window is not configured
	a, err := pol.Next(context.Background(), longEpisode(12))
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	if a.Name != "run_tests" {
		t.Errorf("action = %s", a.Name)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	size := func(r llmtest.Request) int {
		b, _ := json.Marshal(r.Messages)
		return len(b)
	}
	if size(reqs[1]) > size(reqs[0])*2/3 {
		t.Errorf("the retry is %d bytes after %d: not condensed", size(reqs[1]), size(reqs[0]))
	}

	// A server that refuses everything: the error comes back after a few
	// tries, not a loop.
	always := llmtest.NewServer(t, tooLong, tooLong, tooLong, tooLong)
	_, err = llmpolicy.New(always.LLM("m"), nil).Next(context.Background(), longEpisode(12))
	if !llm.IsContextLength(err) || len(always.Requests()) != 4 {
		t.Errorf("err = %v after %d requests", err, len(always.Requests()))
	}
}
