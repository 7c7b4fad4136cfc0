package judge_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/task"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testInput() judge.Input {
	return judge.Input{
		Task: task.Task{
			ID:     "t1",
			Repo:   "https://example.com/calc.git",
			Commit: "0123456789abcdef0123",
			Branch: "main",
			Failures: []task.Failure{
				{
					Package: "example.com/calc",
					Test:    "TestAdd",
					Message: "calc_test.go:12: Add(2, 2) = 5, want 4",
					Output:  "--- FAIL: TestAdd (0.00s)\n    calc_test.go:12: Add(2, 2) = 5, want 4\nFAIL",
					Frames:  []string{"calc_test.go:12", "calc.go:7"},
				},
				{Package: "example.com/calc", Test: "TestSum/empty", Message: "Sum() = 1, want 0"},
			},
			Bisection: task.Bisection{Blame: "bbbbbbbbbbbbbbbbbbbb", Subject: "calc: speed up Add", Author: "Ann"},
		},
		BlameDiff: "--- a/calc.go\n+++ b/calc.go\n@@ -5,3 +5,3 @@\n func Add(a, b int) int {\n-\treturn a + b\n+\treturn a + b + 1\n }\n",
		Patch:     "--- a/calc.go\n+++ b/calc.go\n@@ -5,3 +5,3 @@\n func Add(a, b int) int {\n-\treturn a + b + 1\n+\treturn a + b\n }\n",
		Gates: []task.Gate{
			{Name: "oracle", Verdict: task.GatePass, Detail: "2 tests passed 3 times"},
			{Name: "revert", Verdict: task.GatePass},
		},
		Summary:      "Add added 1 to every sum since bbbbbbb; removed the stray +1.",
		BlameMessage: "Add is on the hot path; skip the overflow check.",
		Tests:        []judge.Source{{Name: "TestAdd (calc_test.go:10)", Text: "func TestAdd(t *testing.T) {\n\tif got := Add(2, 2); got != 4 {\n\t\tt.Fatalf(\"Add(2, 2) = %d, want 4\", got)\n\t}\n}"}},
		Code:         []judge.Change{{Where: "calc.go: func Add", Before: "func Add(a, b int) int {\n\treturn a + b + 1\n}", After: "func Add(a, b int) int {\n\treturn a + b\n}"}},
	}
}

func TestPromptGolden(t *testing.T) {
	got := judge.Prompt(testInput())
	path := filepath.Join("testdata", "prompt.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("Prompt differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		verdict string
		detail  string // a substring
	}{
		{"accept", `{"acceptable": true, "reason": "Removes the stray +1 the blame commit added."}`, task.GatePass, "Removes the stray +1"},
		{"reject", `{"acceptable": false, "reason": "Edits the test's expected value."}`, task.GateFail, "Edits the test's expected value."},
		{"fenced with thinking", "<think>looks right</think>\n```json\n{\"acceptable\": true, \"reason\": \"Fixes the cause.\"}\n```", task.GatePass, "Fixes the cause."},
		{"garbage", "I think this patch is fine!", task.GateFail, "judge answer did not parse"},
		{"prose around JSON", `Sure: {"acceptable": true, "reason": "ok"}`, task.GateFail, "judge answer did not parse"},
		{"string boolean", `{"acceptable": "true", "reason": "ok"}`, task.GateFail, "judge answer did not parse"},
		{"missing verdict", `{"reason": "looks good"}`, task.GateFail, "judge answer did not parse"},
		{"accept without reason", `{"acceptable": true}`, task.GateFail, "accepted without a reason"},
		{"empty", "", task.GateFail, "judge answer did not parse: empty answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Reply{Content: tt.answer})
			in := testInput()
			g, err := judge.NewLLM(srv.LLM("judge-model"), nil).Judge(context.Background(), in)
			if err != nil {
				t.Fatalf("Judge: %v", err)
			}
			if g.Name != "judge" || g.Verdict != tt.verdict || !strings.Contains(g.Detail, tt.detail) {
				t.Errorf("gate = %+v, want verdict %s with detail containing %q", g, tt.verdict, tt.detail)
			}
			r := srv.Requests()[0]
			if len(r.Messages) != 2 || r.Messages[0].Text() != judge.Instructions || r.Messages[1].Text() != judge.Prompt(in) {
				t.Errorf("request messages are not the instructions and the prompt: %+v", r.Messages)
			}
			if rf, _ := r.Raw["response_format"].(map[string]any); rf["type"] != "json_object" {
				t.Errorf("response_format = %v, want json_object", r.Raw["response_format"])
			}
			if len(r.Tools) != 0 {
				t.Errorf("judge offered %d tools", len(r.Tools))
			}
		})
	}
}

func TestJudgeEmptyPatchFailsWithoutAsking(t *testing.T) {
	srv := llmtest.NewServer(t)
	in := testInput()
	in.Patch = " \n"
	g, err := judge.NewLLM(srv.LLM("m"), nil).Judge(context.Background(), in)
	if err != nil || g.Verdict != task.GateFail || g.Detail != "no patch to judge" {
		t.Errorf("gate = %+v, err = %v", g, err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests for an empty patch", n)
	}
}

func TestJudgeModelErrorIsNotAPass(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 500, Body: `{"error":{"message":"boom"}}`})
	g, err := judge.NewLLM(srv.LLM("m"), nil).Judge(context.Background(), testInput())
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || !llm.IsRetryable(err) {
		t.Fatalf("err = %v, want a retryable APIError", err)
	}
	if g.Verdict != task.GateNotRun || !strings.Contains(g.Detail, "boom") {
		t.Errorf("gate = %+v, want not_run with the cause", g)
	}
}

func TestNotRun(t *testing.T) {
	g, err := judge.NotRun{}.Judge(context.Background(), testInput())
	if err != nil {
		t.Fatal(err)
	}
	want := task.Gate{Name: "judge", Verdict: task.GateNotRun, Detail: "no model configured"}
	if g != want {
		t.Errorf("gate = %+v, want %+v", g, want)
	}
	if task.Passed([]task.Gate{g}) {
		t.Error("a judge that did not run passed")
	}
}
