// Package judge is the last gate before a pull request: a model reads the
// failure, the commit that caused it and the candidate patch, and answers
// whether a reviewer should accept the patch, with a reason. It is tuned for
// precision: when in doubt it rejects, and an answer it cannot read is a
// rejection, never a pass.
package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/task"
)

// GateName is the name of the judge's gate.
const GateName = "judge"

// Input is what the judge sees.
type Input struct {
	Task task.Task
	// Patch is the candidate's unified diff.
	Patch string
	// BlameDiff is the diff of the commit that broke the tests, if known.
	BlameDiff string
	// Gates are the verdicts of the checks that ran before the judge.
	Gates []task.Gate
	// Summary is the agent's account of the cause and the fix.
	Summary string
}

// Instructions is the judge's system prompt.
const Instructions = `You are a senior engineer reviewing an automatically generated patch that claims to fix failing tests. Decide whether the patch is acceptable to merge as it is: it fixes the real cause of the failure, correctly, in the code under test.

Reject the patch (acceptable: false) if any of these holds:
- It masks the symptom instead of fixing the cause: swallowing or ignoring errors, recovering from panics, adding nil checks or early returns that hide a bug, catching and discarding exceptions.
- It edits, deletes, skips or disables tests, or weakens assertions, or changes expected values to match wrong behaviour (unless the test itself is plainly wrong and the patch explains why).
- It special-cases the tests' inputs or detects that it runs under test.
- It is unrelated to the failure, or touches code the failure does not involve.
- It simply reverts the commit that broke the tests when that commit had a purpose the revert throws away.
- It is incorrect, incomplete or risky for callers other than the failing tests, or you cannot tell whether it is correct.
- You are unsure for any reason. Only accept a patch you would approve in code review yourself.

Answer with one JSON object and nothing else, no code fence:
{"acceptable": true or false, "reason": "one or two sentences explaining the decision"}`

// Caps on what the prompt quotes, in bytes.
const (
	maxDiff    = 30000
	maxSummary = 4000
	maxOutput  = 2000
	maxTests   = 10
)

// Prompt is the user message that describes the case to the judge.
func Prompt(in Input) string {
	var b strings.Builder
	t := in.Task
	fmt.Fprintf(&b, "# Failure\n\nRepository %s, commit %s", orUnknown(t.Repo), orUnknown(task.Short(t.Commit)))
	if t.Branch != "" {
		fmt.Fprintf(&b, ", branch %s", t.Branch)
	}
	fmt.Fprintf(&b, ".\nFailing tests (%d):\n", len(t.Failures))
	for i, f := range t.Failures {
		if i == maxTests {
			fmt.Fprintf(&b, "- … and %d more\n", len(t.Failures)-maxTests)
			break
		}
		fmt.Fprintf(&b, "- %s", f.ID())
		if f.Message != "" {
			fmt.Fprintf(&b, ": %s", f.Message)
		}
		b.WriteString("\n")
		if len(f.Frames) > 0 {
			fmt.Fprintf(&b, "  at %s\n", strings.Join(f.Frames, ", "))
		}
		if i == 0 && strings.TrimSpace(f.Output) != "" {
			fmt.Fprintf(&b, "  output:\n%s\n", fenced("", capText(strings.TrimSpace(f.Output), maxOutput)))
		}
	}

	b.WriteString("\n# The commit that broke the tests\n\n")
	if bi := t.Bisection; bi.Blame != "" {
		fmt.Fprintf(&b, "%s", task.Short(bi.Blame))
		if bi.Subject != "" {
			fmt.Fprintf(&b, " %q", bi.Subject)
		}
		if bi.Author != "" {
			fmt.Fprintf(&b, " by %s", bi.Author)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("Unknown.\n")
	}
	if strings.TrimSpace(in.BlameDiff) != "" {
		fmt.Fprintf(&b, "%s\n", fenced("diff", capText(in.BlameDiff, maxDiff)))
	}

	fmt.Fprintf(&b, "\n# The candidate patch\n\n%s\n", fenced("diff", capText(in.Patch, maxDiff)))

	b.WriteString("\n# The author's explanation\n\n")
	if s := strings.TrimSpace(in.Summary); s != "" {
		fmt.Fprintf(&b, "%s\n", capText(s, maxSummary))
	} else {
		b.WriteString("None given.\n")
	}

	if len(in.Gates) > 0 {
		b.WriteString("\n# Automatic checks\n\n")
		for _, g := range in.Gates {
			fmt.Fprintf(&b, "- %s: %s", g.Name, g.Verdict)
			if g.Detail != "" {
				fmt.Fprintf(&b, " (%s)", oneLine(g.Detail, 300))
			}
			b.WriteString("\n")
		}
		b.WriteString("Passing checks show that the tests pass; they do not show that the fix is right.\n")
	}

	b.WriteString("\nIs this patch acceptable? Answer with the JSON object only.\n")
	return b.String()
}

// LLM is a judge backed by a chat model.
type LLM struct {
	client llm.Client
	log    *zap.Logger
}

// NewLLM returns a judge that asks client. A nil log discards.
func NewLLM(client llm.Client, log *zap.Logger) *LLM {
	if log == nil {
		log = zap.NewNop()
	}
	return &LLM{client: client, log: log}
}

// Judge asks the model and returns the gate: pass when it accepts with a
// reason, fail when it rejects or its answer does not parse. When the model
// cannot be asked, the error is returned with a not_run gate carrying it.
func (j *LLM) Judge(ctx context.Context, in Input) (task.Gate, error) {
	start := time.Now()
	gate := func(verdict, detail string) task.Gate {
		return task.Gate{Name: GateName, Verdict: verdict, Detail: detail, ElapsedMS: time.Since(start).Milliseconds()}
	}
	if strings.TrimSpace(in.Patch) == "" {
		return gate(task.GateFail, "no patch to judge"), nil
	}
	resp, err := j.client.Chat(ctx, llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: Instructions},
			{Role: llm.RoleUser, Content: Prompt(in)},
		},
		JSON: true,
	})
	if err != nil {
		err = fmt.Errorf("judge with %s: %w", j.client.Model(), err)
		return gate(task.GateNotRun, err.Error()), err
	}
	acceptable, reason, err := parseAnswer(resp.Message.Content)
	log := j.log.With(zap.String("model", j.client.Model()), zap.String("task", in.Task.ID),
		zap.Int("prompt_tokens", resp.Usage.PromptTokens))
	if err != nil {
		log.Warn("judge answer did not parse", zap.Error(err), zap.String("answer", oneLine(resp.Message.Content, 500)))
		return gate(task.GateFail, "judge answer did not parse: "+err.Error()), nil
	}
	verdict := task.GateFail
	if acceptable {
		verdict = task.GatePass
	}
	log.Info("judge decided", zap.String("verdict", verdict), zap.String("reason", reason))
	return gate(verdict, reason), nil
}

// NotRun is the judge when no model is configured: its gate does not run,
// which is never a pass.
type NotRun struct{}

// Judge returns a not_run gate.
func (NotRun) Judge(context.Context, Input) (task.Gate, error) {
	return task.Gate{Name: GateName, Verdict: task.GateNotRun, Detail: "no model configured"}, nil
}

var (
	thinkBlock = regexp.MustCompile(`(?s)^\s*<think>.*?</think>`)
	codeFence  = regexp.MustCompile("(?s)^```[a-zA-Z]*\\s*\n(.*?)\n?```$")
)

// parseAnswer reads {"acceptable": bool, "reason": string}. It forgives a
// leading reasoning block and a code fence around the object, nothing else:
// prose around the object, a missing field or a wrong type is an error.
// Acceptance needs a reason.
func parseAnswer(content string) (bool, string, error) {
	s := strings.TrimSpace(thinkBlock.ReplaceAllString(content, ""))
	if m := codeFence.FindStringSubmatch(s); m != nil {
		s = strings.TrimSpace(m[1])
	}
	if s == "" {
		return false, "", errors.New("empty answer")
	}
	var ans struct {
		Acceptable *bool   `json:"acceptable"`
		Reason     *string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(s), &ans); err != nil {
		return false, "", fmt.Errorf("%v: %s", err, oneLine(s, 200))
	}
	if ans.Acceptable == nil {
		return false, "", fmt.Errorf(`no boolean "acceptable": %s`, oneLine(s, 200))
	}
	reason := ""
	if ans.Reason != nil {
		reason = strings.TrimSpace(*ans.Reason)
	}
	if reason == "" {
		if *ans.Acceptable {
			return false, "", errors.New("accepted without a reason")
		}
		reason = "rejected without a reason"
	}
	return *ans.Acceptable, reason, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// fenced quotes s in a code fence longer than any backtick run inside it.
func fenced(lang, s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}

// capText keeps the start of s, up to max bytes, and says how much it cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n[… %d more bytes not shown …]", s[:cut], len(s)-cut)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
