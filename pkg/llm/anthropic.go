package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// DefaultAnthropicBaseURL is Anthropic's own endpoint.
const DefaultAnthropicBaseURL = "https://api.anthropic.com/"

// DefaultAnthropicMaxTokens is the answer cap sent when a request sets none:
// the Messages API requires one.
const DefaultAnthropicMaxTokens = 8192

// Anthropic is a Client for Anthropic's Messages API, with native tool use
// and prompt caching: the tools, the system prompt and the first user
// message (the task) are marked as a cached prefix, and so is the end of
// the conversation, so that each step of an episode reads what the previous
// one wrote instead of paying for it again.
type Anthropic struct {
	svc   anthropic.MessageService
	model string
}

var _ Client = (*Anthropic)(nil)

// NewAnthropic returns a client for cfg. Retries are left to the caller
// (NewClient wraps one in Retrying); the SDK makes one attempt. Nothing is
// read from the environment here: the configuration passes the key.
func NewAnthropic(cfg Config) (*Anthropic, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: no model configured")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("llm: negative Timeout %s", cfg.Timeout)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultAnthropicBaseURL
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(&http.Client{Transport: transport}),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	return &Anthropic{svc: anthropic.NewMessageService(opts...), model: cfg.Model}, nil
}

// Model is the configured model's name.
func (c *Anthropic) Model() string { return c.model }

// Chat sends one Messages request.
func (c *Anthropic) Chat(ctx context.Context, req Request) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, fmt.Errorf("chat with %s: %w", c.model, err)
	}
	var failed errorAnswer
	capture := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return failed.keep(r, next)
	})
	out, err := c.svc.New(ctx, params, capture)
	if err != nil {
		return Response{}, fmt.Errorf("chat with %s: %w", c.model, failed.classify(ctx, err))
	}
	msg := Message{Role: RoleAssistant}
	var text []string
	for _, b := range out.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: toolInput(b.Input)})
		}
	}
	msg.Content = strings.Join(text, "\n")
	u := out.Usage
	return Response{
		Message:      msg,
		FinishReason: finishReason(string(out.StopReason)),
		Usage: Usage{
			PromptTokens:     int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
			CachedTokens:     int(u.CacheReadInputTokens),
			CacheWriteTokens: int(u.CacheCreationInputTokens),
			CompletionTokens: int(u.OutputTokens),
		},
	}, nil
}

// toolInput is a tool call's input as the arguments' JSON text. An input
// that a proxy sent as a JSON string is unquoted, valid or not: the caller
// reports invalid arguments to the model.
func toolInput(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// finishReason maps Anthropic's stop reasons to the chat-completions names
// the rest of redfix uses.
func finishReason(r string) string {
	switch r {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	}
	return r
}

func (c *Anthropic) params(req Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(c.model), MaxTokens: DefaultAnthropicMaxTokens}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	var system []string
	firstUser := -1
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			system = append(system, m.Content)
		case RoleUser:
			block := anthropic.NewTextBlock(nonEmpty(m.Content))
			if firstUser < 0 {
				firstUser = len(p.Messages)
			}
			p.Messages = appendBlocks(p.Messages, anthropic.MessageParamRoleUser, block)
		case RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, inputObject(tc.Arguments), tc.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock("(no answer)"))
			}
			p.Messages = appendBlocks(p.Messages, anthropic.MessageParamRoleAssistant, blocks...)
		case RoleTool:
			if m.ToolCallID == "" {
				return p, fmt.Errorf("message %d: tool message without a tool call id", i)
			}
			p.Messages = appendBlocks(p.Messages, anthropic.MessageParamRoleUser,
				anthropic.NewToolResultBlock(m.ToolCallID, nonEmpty(m.Content), m.IsError))
		default:
			return p, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	if len(p.Messages) == 0 {
		return p, errors.New("no user or assistant message")
	}
	if len(system) > 0 {
		p.System = []anthropic.TextBlockParam{{Text: strings.Join(system, "\n\n"), CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		schema := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range t.Parameters {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				schema.Required = stringList(v)
			default:
				schema.ExtraFields[k] = v
			}
		}
		if schema.Properties == nil {
			schema.Properties = map[string]any{}
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	// Cache breakpoints (at most four): the tools, the system prompt, the
	// task (first user message) and the end of the conversation.
	if n := len(p.Tools); n > 0 {
		p.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	if firstUser >= 0 {
		markCache(&p.Messages[firstUser])
	}
	if last := len(p.Messages) - 1; last != firstUser {
		markCache(&p.Messages[last])
	}
	return p, nil
}

// appendBlocks adds blocks to the conversation, merging them into the last
// message when it has the same role: the API wants turns to alternate, and
// tool results answering one assistant turn belong in one user turn.
func appendBlocks(msgs []anthropic.MessageParam, role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) []anthropic.MessageParam {
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		return msgs
	}
	return append(msgs, anthropic.MessageParam{Role: role, Content: blocks})
}

// markCache puts a cache breakpoint on the last block of m.
func markCache(m *anthropic.MessageParam) {
	if len(m.Content) == 0 {
		return
	}
	b := &m.Content[len(m.Content)-1]
	switch {
	case b.OfText != nil:
		b.OfText.CacheControl = anthropic.NewCacheControlEphemeralParam()
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = anthropic.NewCacheControlEphemeralParam()
	case b.OfToolUse != nil:
		b.OfToolUse.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
}

// inputObject is a replayed tool call's input: the API takes an object, so
// arguments that were not a JSON object are sent wrapped, as the text the
// model wrote.
func inputObject(args string) any {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	return map[string]any{"invalid_arguments": args}
}

func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// nonEmpty keeps a content block from being empty, which the API refuses.
func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty)"
	}
	return s
}
