package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

func modelEnv(url string) func(string) string {
	env := map[string]string{"REDFIX_MODEL": "judge-model", "REDFIX_LLM_BASE_URL": url, "REDFIX_LLM_API_KEY": "k", "REDFIX_LOG_LEVEL": "warn"}
	return func(k string) string { return env[k] }
}

func evalCase(id, label string) string {
	b, _ := json.Marshal(judge.Case{
		ID: id, Label: label, Package: "example.com/m", Test: "TestX", Message: "boom",
		TestSource: "func TestX(t *testing.T) {}",
		Patch:      "--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,3 @@\n func X() int {\n-\treturn 1\n+\treturn 2\n }\n",
	})
	return string(b)
}

func TestJudgeEvalScores(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "set.jsonl")
	lines := []string{evalCase("good-1", "accept"), evalCase("good-2", "accept"), evalCase("bad-1", "reject"), evalCase("bad-2", "reject"), evalCase("bad-3", "reject")}
	if err := os.WriteFile(data, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	accept := llmtest.Reply{Content: `{"acceptable": true, "reason": "fixes it"}`}
	reject := llmtest.Reply{Content: `{"acceptable": false, "reason": "masks it"}`}
	srv := llmtest.NewServer(t,
		accept,                         // good-1: true accept
		llmtest.Reply{Content: "LGTM"}, // good-2: malformed, so a false reject
		accept,                         // bad-1: false accept
		reject,                         // bad-2: true reject
		llmtest.Reply{Content: `{"acceptable": "yes"}`}, // bad-3: malformed, so a true reject
	)
	var stdout, stderr bytes.Buffer
	if err := judgeEvalCommand(context.Background(), []string{"--data", data, "--json"}, modelEnv(srv.URL), &stdout, &stderr); err != nil {
		t.Fatalf("judge-eval: %v\n%s", err, stderr.String())
	}
	var rep judge.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	want := judge.Confusion{TP: 1, FN: 1, FP: 1, TN: 2}
	if rep.Confusion != want || rep.Unparsed != 2 || rep.Cases != 5 || rep.Model != "judge-model" {
		t.Errorf("report = %+v, want confusion %+v and 2 unparsed", rep, want)
	}
	if rep.Precision == nil || *rep.Precision != 0.5 || rep.Recall == nil || *rep.Recall != 0.5 {
		t.Errorf("precision %v, recall %v; want 0.5 and 0.5", rep.Precision, rep.Recall)
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("%d requests, want one per case", n)
	}

	// The same for a person.
	srv2 := llmtest.NewServer(t, accept, llmtest.Reply{Content: "LGTM"}, accept, reject, reject)
	stdout.Reset()
	if err := judgeEvalCommand(context.Background(), []string{"--data", data}, modelEnv(srv2.URL), &stdout, &stderr); err != nil {
		t.Fatalf("judge-eval: %v", err)
	}
	for _, s := range []string{"label acceptable                1              1", "label unacceptable              1              2",
		"precision (accept) 0.500", "recall    (accept) 0.500", "1 answer(s) could not be read", "false accepts (unacceptable patches the judge let through):\n- bad-1: fixes it",
		"false rejects (acceptable patches the judge refused):\n- good-2: judge answer did not parse"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("output does not say %q:\n%s", s, stdout.String())
		}
	}
}

// The shipped set through the command, against a model that accepts
// everything: every unacceptable patch is a false accept, except the one
// that plants an instruction to the reviewer, which is refused unasked.
func TestJudgeEvalShippedSetAgainstAnAcceptingModel(t *testing.T) {
	t.Parallel()
	data := filepath.Join("..", "judge", "testdata", "labelled.jsonl")
	f, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := judge.LoadCases(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var replies []llmtest.Reply
	accepts, rejects := 0, 0
	for _, c := range cases {
		replies = append(replies, llmtest.Reply{Content: `{"acceptable": true, "reason": "looks right"}`})
		if c.Label == "accept" {
			accepts++
		} else {
			rejects++
		}
	}
	srv := llmtest.NewServer(t, replies...)
	var stdout, stderr bytes.Buffer
	if err := judgeEvalCommand(context.Background(), []string{"--data", data, "--json"}, modelEnv(srv.URL), &stdout, &stderr); err != nil {
		t.Fatalf("judge-eval: %v\n%s", err, stderr.String())
	}
	var rep judge.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Confusion.TP != accepts || rep.Confusion.FN != 0 || rep.Confusion.FP != rejects-1 || rep.Confusion.TN != 1 {
		t.Errorf("confusion %+v, want %d true accepts, %d false accepts, 1 true reject (the planted instruction)", rep.Confusion, accepts, rejects-1)
	}
	if n := len(srv.Requests()); n != len(cases)-1 {
		t.Errorf("%d requests for %d cases, want the planted one not asked", n, len(cases))
	}
	for _, r := range srv.Requests() {
		if !strings.Contains(r.Messages[1].Text(), "# The failing tests' source") {
			t.Fatalf("a case was judged without its test's source")
		}
	}
}

func TestJudgeEvalUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"id":"x","label":"perhaps"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		env  func(string) string
		says string
	}{
		{"no data", nil, modelEnv("http://127.0.0.1:1"), "--data is required"},
		{"no model", []string{"--data", bad}, noEnv, "no model configured"},
		{"bad case", []string{"--data", bad}, modelEnv("http://127.0.0.1:1"), `label "perhaps"`},
		{"missing file", []string{"--data", bad + ".nope"}, modelEnv("http://127.0.0.1:1"), "no such file"},
	} {
		err := judgeEvalCommand(ctx, c.args, c.env, &stdout, &stderr)
		if ExitCode(err) != 2 || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: exit %d, %v; want 2 saying %q", c.name, ExitCode(err), err, c.says)
		}
	}
	// A model that cannot be reached is the machinery failing: exit 2.
	good := filepath.Join(t.TempDir(), "good.jsonl")
	if err := os.WriteFile(good, []byte(evalCase("a", "accept")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 400, Body: `{"error":{"message":"bad model"}}`})
	err := judgeEvalCommand(ctx, []string{"--data", good}, modelEnv(srv.URL), &stdout, &stderr)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "bad model") {
		t.Errorf("unreachable model: exit %d, %v", ExitCode(err), err)
	}
}
