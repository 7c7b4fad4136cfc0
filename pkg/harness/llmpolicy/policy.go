// Package llmpolicy is the harness policy that asks a chat model for each
// action, through tool calls, and the patcher sub-agent that turns edit
// instructions into SEARCH/REPLACE blocks.
package llmpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/prompt"
)

// maxObservation caps one observation as the model sees it; the tools cap
// their own output, this only guards the context window.
const maxObservation = 24000

// Policy asks a chat model for the next action. It keeps no state between
// calls: each Next rebuilds the conversation from the episode, so a policy
// can resume any episode and the trajectory is the only record.
type Policy struct {
	client llm.Client
	log    *zap.Logger
}

var _ harness.Policy = (*Policy)(nil)

// New returns a policy that uses client. A nil log discards.
func New(client llm.Client, log *zap.Logger) *Policy {
	if log == nil {
		log = zap.NewNop()
	}
	return &Policy{client: client, log: log}
}

// Name is "llm:" and the model's name.
func (p *Policy) Name() string { return "llm:" + p.client.Model() }

// Next sends the episode as a conversation and turns the model's answer into
// an action. An answer without a tool call ends the episode: it becomes an
// exit whose summary is the model's text.
func (p *Policy) Next(ctx context.Context, ep *harness.Episode) (harness.Action, error) {
	if ep == nil {
		return harness.Action{}, errors.New("llm policy: nil episode")
	}
	step := len(ep.Steps) + 1
	req := llm.Request{Messages: Conversation(ep), Tools: tools(ep.Tools)}
	resp, err := p.client.Chat(ctx, req)
	if err != nil {
		return harness.Action{}, fmt.Errorf("llm policy step %d: %w", step, err)
	}
	log := p.log.With(zap.Int("step", step), zap.String("finish_reason", resp.FinishReason),
		zap.Int("prompt_tokens", resp.Usage.PromptTokens), zap.Int("completion_tokens", resp.Usage.CompletionTokens))
	thought := stripThinking(resp.Message.Content)

	calls := resp.Message.ToolCalls
	if len(calls) == 0 {
		summary := thought
		if summary == "" {
			summary = fmt.Sprintf("The model stopped without calling a tool or writing a summary (finish reason %q).", resp.FinishReason)
		}
		log.Info("model answered without a tool call; exiting")
		return harness.NewAction(harness.ActExit, thought, harness.ExitArgs{Summary: summary}), nil
	}
	// One action per step: the loop observes each action before the next is
	// chosen, so only the first call is taken. The others are dropped, and
	// the replayed conversation shows the model only the call that ran.
	if len(calls) > 1 {
		dropped := make([]string, 0, len(calls)-1)
		for _, c := range calls[1:] {
			dropped = append(dropped, c.Name)
		}
		log.Debug("model made several tool calls; taking the first", zap.String("tool", calls[0].Name), zap.Strings("dropped", dropped))
	}
	call := calls[0]
	id := call.ID
	if id == "" {
		id = syntheticID(step)
	}
	log.Debug("model chose a tool", zap.String("tool", call.Name), zap.String("call_id", id))
	return harness.Action{Name: call.Name, Args: argsJSON(call.Arguments), Thought: thought, CallID: id}, nil
}

// Conversation is the chat that Next sends for ep: the system prompt, the
// task, then for each step the assistant's tool call and the tool's answer.
func Conversation(ep *harness.Episode) []llm.Message {
	msgs := make([]llm.Message, 0, 2+2*len(ep.Steps))
	msgs = append(msgs,
		llm.Message{Role: llm.RoleSystem, Content: buildSystem(ep.MaxSteps, len(ep.Steps))},
		llm.Message{Role: llm.RoleUser, Content: taskSummary(ep.Task)},
	)
	used := make(map[string]bool, len(ep.Steps))
	for i, s := range ep.Steps {
		n := s.N
		if n <= 0 {
			n = i + 1
		}
		// Servers need each tool answer to name its call; small models reuse
		// or omit ids, so a missing or repeated id is replaced by a stable one.
		id := s.Action.CallID
		for k := 0; id == "" || used[id]; k++ {
			id = syntheticID(n)
			if k > 0 {
				id = fmt.Sprintf("%s_%d", id, k)
			}
		}
		used[id] = true
		msgs = append(msgs,
			llm.Message{
				Role:      llm.RoleAssistant,
				Content:   s.Action.Thought,
				ToolCalls: []llm.ToolCall{{ID: id, Name: s.Action.Name, Arguments: argsText(s.Action.Args)}},
			},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: observationText(s.Action.Name, s.Observation)},
		)
	}
	return msgs
}

func syntheticID(n int) string { return fmt.Sprintf("call_%d", n) }

func tools(specs []harness.ToolSpec) []llm.Tool {
	out := make([]llm.Tool, 0, len(specs))
	for _, s := range specs {
		out = append(out, llm.Tool{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	return out
}

// observationText is a tool's answer as the model sees it: fenced as data,
// since it quotes the repository, test output and commit messages, and
// marked when the action failed.
func observationText(name string, o harness.Observation) string {
	text := o.Content
	if strings.TrimSpace(text) == "" {
		return "(no output)"
	}
	text = prompt.Data(name+" output", clip.Middle(text, maxObservation))
	if o.IsError {
		text = "ERROR: the action failed.\n" + text
	}
	return text
}

// argsJSON turns the model's arguments into Action.Args. Arguments that are
// not valid JSON are kept as a JSON string holding the text, for two reasons:
// a json.RawMessage holding invalid JSON makes the whole trajectory fail to
// marshal, and the tool's decoding of a string into its arguments' struct
// fails, which the harness reports to the model. argsText undoes this.
func argsJSON(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	quoted, _ := json.Marshal(args)
	return quoted
}

// argsText is the arguments as the model wrote them, for the replayed
// conversation.
func argsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

var thinkBlock = regexp.MustCompile(`(?s)^\s*<think>.*?</think>\s*`)

// stripThinking drops the reasoning block that some open models (Qwen3,
// DeepSeek-R1 served without a reasoning parser) put before their answer.
func stripThinking(s string) string {
	return strings.TrimSpace(thinkBlock.ReplaceAllString(s, ""))
}
