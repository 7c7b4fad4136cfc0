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
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/prompt"
)

// maxObservation caps one observation as the model sees it; the tools cap
// their own output, this only guards the context window.
const maxObservation = 24000

// Options tune a policy.
type Options struct {
	// TextTools selects the ReAct text format over native tool calls, for
	// models served without tool calling.
	TextTools bool
	// Temperature is sent with each request; nil leaves it to the server.
	Temperature *float64
	// ContextWindow is the model's window in tokens; the conversation is
	// condensed as it nears it. 0: condensed only after the server refuses
	// a prompt as too long.
	ContextWindow int
}

// Policy asks a chat model for the next action. It keeps no state between
// calls: each Next rebuilds the conversation from the episode, so a policy
// can resume any episode and the trajectory is the only record.
type Policy struct {
	client llm.Client
	opts   Options
	log    *zap.Logger
}

var _ harness.Policy = (*Policy)(nil)

// New returns a policy that uses client with native tool calls. A nil log
// discards.
func New(client llm.Client, log *zap.Logger) *Policy {
	return NewWithOptions(client, Options{}, log)
}

// NewWithOptions returns a policy that uses client as opts say.
func NewWithOptions(client llm.Client, opts Options, log *zap.Logger) *Policy {
	if log == nil {
		log = zap.NewNop()
	}
	return &Policy{client: client, opts: opts, log: log}
}

// Name is "llm:" and the model's name.
func (p *Policy) Name() string { return "llm:" + p.client.Model() }

// maxShrinks is how many times a prompt refused as too long is condensed
// harder and sent again.
const maxShrinks = 3

// Next sends the episode as a conversation and turns the model's answer into
// an action. An answer without a tool call ends the episode: it becomes an
// exit whose summary is the model's text. A prompt the server refuses as too
// long is condensed harder and sent again.
func (p *Policy) Next(ctx context.Context, ep *harness.Episode) (harness.Action, error) {
	if ep == nil {
		return harness.Action{}, errors.New("llm policy: nil episode")
	}
	step := len(ep.Steps) + 1
	budget := 0
	if p.opts.ContextWindow > 0 {
		budget = max(p.opts.ContextWindow*3/4-answerReserve, p.opts.ContextWindow/4)
	}
	var (
		resp llm.Response
		err  error
		conv conversation
	)
	for shrink := 0; ; shrink++ {
		conv = p.conversation(ep, budget)
		req := llm.Request{Messages: conv.messages, Temperature: p.opts.Temperature}
		if !p.opts.TextTools {
			req.Tools = llmTools(ep.Tools)
		}
		resp, err = p.client.Chat(ctx, req)
		if err == nil || !llm.IsContextLength(err) || shrink == maxShrinks {
			break
		}
		// The window is smaller than configured, or unknown: halve what we
		// think we sent and try again.
		budget = conv.estimate / 2
		p.log.Info("prompt too long for the model; condensing", zap.Int("step", step),
			zap.Int("estimated_tokens", conv.estimate), zap.Int("budget_tokens", budget))
	}
	if err != nil {
		return harness.Action{}, fmt.Errorf("llm policy step %d: %w", step, err)
	}
	log := p.log.With(zap.Int("step", step), zap.String("finish_reason", resp.FinishReason),
		zap.Int("prompt_tokens", resp.Usage.PromptTokens), zap.Int("cached_tokens", resp.Usage.CachedTokens),
		zap.Int("completion_tokens", resp.Usage.CompletionTokens), zap.Int("condensed", conv.condensed))

	calls := resp.Message.ToolCalls
	thought := stripThinking(resp.Message.Content)
	if p.opts.TextTools {
		var name, args string
		var ok bool
		thought, name, args, ok = parseReAct(thought)
		calls = nil
		if ok {
			calls = []llm.ToolCall{{Name: name, Arguments: args}}
		}
	}
	if len(calls) == 0 {
		summary := thought
		if summary == "" {
			summary = fmt.Sprintf("The model stopped without calling a tool or writing a summary (finish reason %q).", resp.FinishReason)
		}
		log.Info("model answered without a tool call; exiting")
		return harness.NewAction(tools.Exit, thought, tools.ExitArgs{Summary: summary}), nil
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

// Conversation is the chat that Next sends for ep with native tool calls
// and no window: the system prompt, the task, then for each step the
// assistant's tool call and the tool's answer.
func Conversation(ep *harness.Episode) []llm.Message {
	return (&Policy{}).conversation(ep, 0).messages
}

type conversation struct {
	messages  []llm.Message
	estimate  int // tokens, roughly
	condensed int // observations condensed or cut
}

// conversation builds the messages for ep, condensing older observations to
// fit budget tokens (0: no limit).
func (p *Policy) conversation(ep *harness.Episode, budget int) conversation {
	sys := buildSystem(ep.MaxSteps, len(ep.Steps))
	if p.opts.TextTools {
		example := ep.Words.Example
		if example == "" {
			example = tools.WordsOf(nil).Example
		}
		sys += fmt.Sprintf(reactFormat, example, example, reactTools(ep.Tools))
	}
	task := taskSummary(ep.Task)
	obs := make([]string, len(ep.Steps))
	fixed := len(sys) + len(task)
	if !p.opts.TextTools {
		if b, err := json.Marshal(ep.Tools); err == nil {
			fixed += len(b)
		}
	}
	for i, s := range ep.Steps {
		obs[i] = observationText(s.Action.Name, s.Observation)
		fixed += len(s.Action.Thought) + len(s.Action.Args) + 32
	}
	fixed /= charsPerToken
	c := conversation{condensed: condense(ep, obs, budget, fixed)}

	msgs := make([]llm.Message, 0, 2+2*len(ep.Steps))
	msgs = append(msgs,
		llm.Message{Role: llm.RoleSystem, Content: sys},
		llm.Message{Role: llm.RoleUser, Content: task},
	)
	used := make(map[string]bool, len(ep.Steps))
	for i, s := range ep.Steps {
		if p.opts.TextTools {
			msgs = append(msgs,
				llm.Message{Role: llm.RoleAssistant, Content: reactCall(s.Action)},
				llm.Message{Role: llm.RoleUser, Content: "Observation:\n" + obs[i]},
			)
			continue
		}
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
			llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: obs[i], IsError: s.Observation.IsError},
		)
	}
	c.messages = msgs
	c.estimate = fixed
	for _, o := range obs {
		c.estimate += (len(o) + 16) / charsPerToken
	}
	return c
}

func syntheticID(n int) string { return fmt.Sprintf("call_%d", n) }

func llmTools(specs []tools.Spec) []llm.Tool {
	out := make([]llm.Tool, 0, len(specs))
	for _, s := range specs {
		out = append(out, llm.Tool{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	return out
}

// observationText is a tool's answer as the model sees it: fenced as data,
// since it quotes the repository, test output and commit messages, and
// marked when the action failed.
func observationText(name string, o tools.Observation) string {
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
