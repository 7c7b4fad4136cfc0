package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// The shipped sets through the command, each a --data, against a model that
// accepts everything: every unacceptable patch is a false accept, except the
// Go set's one that plants an instruction to the reviewer, which is refused
// unasked; the figures come per set as well as overall.
func TestJudgeEvalShippedSetAgainstAnAcceptingModel(t *testing.T) {
	t.Parallel()
	var (
		args    []string
		replies []llmtest.Reply
		want    []judge.SetReport
		total   int
	)
	for _, name := range []string{"labelled.jsonl", "labelled-python.jsonl", "labelled-js.jsonl"} {
		data := filepath.Join("..", "judge", "testdata", name)
		f, err := os.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := judge.LoadCases(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		s := judge.SetReport{Name: data, Cases: len(cases)}
		for _, c := range cases {
			replies = append(replies, llmtest.Reply{Content: `{"acceptable": true, "reason": "looks right"}`})
			if c.Label == "accept" {
				s.Confusion.TP++
			} else {
				s.Confusion.FP++
			}
		}
		if name == "labelled.jsonl" {
			s.Confusion.FP--
			s.Confusion.TN++
		}
		args = append(args, "--data", data)
		want = append(want, s)
		total += len(cases)
	}
	srv := llmtest.NewServer(t, replies...)
	var stdout, stderr bytes.Buffer
	if err := judgeEvalCommand(context.Background(), append(args, "--json"), modelEnv(srv.URL), &stdout, &stderr); err != nil {
		t.Fatalf("judge-eval: %v\n%s", err, stderr.String())
	}
	var rep judge.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sets) != len(want) {
		t.Fatalf("%d sets in the report, want %d", len(rep.Sets), len(want))
	}
	var sum judge.Confusion
	for i, s := range rep.Sets {
		if s.Name != want[i].Name || s.Cases != want[i].Cases || s.Confusion != want[i].Confusion || s.Recall == nil || *s.Recall != 1 {
			t.Errorf("set %d = %+v, want %+v and recall 1", i, s, want[i])
		}
		sum.TP, sum.FP, sum.FN, sum.TN = sum.TP+s.Confusion.TP, sum.FP+s.Confusion.FP, sum.FN+s.Confusion.FN, sum.TN+s.Confusion.TN
	}
	if rep.Cases != total || rep.Confusion != sum || sum.TN != 1 {
		t.Errorf("overall %d cases, confusion %+v; want %d and the sum of the sets' %+v, one true reject (the planted instruction)", rep.Cases, rep.Confusion, total, sum)
	}
	if n := len(srv.Requests()); n != total-1 {
		t.Errorf("%d requests for %d cases, want the planted one not asked", n, total)
	}
	for _, r := range srv.Requests() {
		if !strings.Contains(r.Messages[1].Text(), "# The failing tests' source") {
			t.Fatalf("a case was judged without its test's source")
		}
	}
}

// Two sets for a person: a line of figures for each, after the overall
// ones; a case id used in both sets is refused before the model is asked.
func TestJudgeEvalPerSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	py, js := filepath.Join(dir, "py.jsonl"), filepath.Join(dir, "js.jsonl")
	if err := os.WriteFile(py, []byte(evalCase("py-good", "accept")+"\n"+evalCase("py-bad", "reject")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(js, []byte(evalCase("js-good", "accept")+"\n"+evalCase("js-bad", "reject")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	accept := llmtest.Reply{Content: `{"acceptable": true, "reason": "fixes it"}`}
	reject := llmtest.Reply{Content: `{"acceptable": false, "reason": "masks it"}`}
	srv := llmtest.NewServer(t, accept, reject, reject, accept)
	var stdout, stderr bytes.Buffer
	if err := judgeEvalCommand(context.Background(), []string{"--data", py, "--data", js}, modelEnv(srv.URL), &stdout, &stderr); err != nil {
		t.Fatalf("judge-eval: %v\n%s", err, stderr.String())
	}
	for _, s := range []string{"judge judge-model, 1 vote(s), 4 cases", "precision (accept) 0.500",
		"per set: cases, true/false accepts, false/true rejects, precision, recall\n",
		fmt.Sprintf("%-28s %4d  %4d %4d  %4d %4d  %s  %s\n", py, 2, 1, 0, 0, 1, "1.000", "1.000"),
		fmt.Sprintf("%-28s %4d  %4d %4d  %4d %4d  %s  %s\n", js, 2, 0, 1, 1, 0, "0.000", "0.000")} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("output does not say %q:\n%s", s, stdout.String())
		}
	}
	if err := os.WriteFile(js, []byte(evalCase("py-good", "accept")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := judgeEvalCommand(context.Background(), []string{"--data", py, "--data", js}, modelEnv(srv.URL), &stdout, &stderr)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "id py-good already used in "+py) {
		t.Errorf("an id in two sets: exit %d, %v", ExitCode(err), err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4 (none for the refused run)", n)
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
