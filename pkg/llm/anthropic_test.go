package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

func TestAnthropicToolUseAndCaching(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.Reply{
		Content:   "Let me read the file.",
		ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`}},
	})
	srv.Usage = map[string]int{"input_tokens": 20, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 80, "output_tokens": 15}
	c := srv.LLM("claude-test")
	temp := 0.5
	resp, err := c.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "sys"},
			{Role: llm.RoleUser, Content: "the task"},
			{Role: llm.RoleAssistant, Content: "looking", ToolCalls: []llm.ToolCall{{ID: "toolu_a", Name: "run_tests", Arguments: `{}`}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_a", Content: "FAIL TestX", IsError: true},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_b", Name: "edit", Arguments: `{"path": "a.go", "blocks": `}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_b", Content: "arguments are not valid JSON", IsError: true},
			{Role: llm.RoleUser, Content: "a note"},
		},
		Tools: []llm.Tool{
			{Name: "read_file", Description: "Read a file.", Parameters: map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"path": map[string]any{"type": "string"}},
				"required":             []any{"path"},
				"additionalProperties": false,
			}},
			{Name: "run_tests"},
		},
		Temperature: &temp,
	})
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	want := llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: "Let me read the file.",
			ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		FinishReason: "tool_calls",
		Usage:        llm.Usage{PromptTokens: 1000, CachedTokens: 900, CacheWriteTokens: 80, CompletionTokens: 15},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n got %+v\nwant %+v", resp, want)
	}

	r := srv.Requests()[0]
	if r.Model != "claude-test" || r.Header.Get("X-Api-Key") != "test-key" || r.MaxTokens != llm.DefaultAnthropicMaxTokens {
		t.Errorf("model %q key %q max_tokens %d", r.Model, r.Header.Get("X-Api-Key"), r.MaxTokens)
	}
	if r.Raw["temperature"] != 0.5 {
		t.Errorf("temperature = %v", r.Raw["temperature"])
	}
	if len(r.System) != 1 || r.System[0].Text != "sys" || r.System[0].CacheControl == nil {
		t.Errorf("system = %+v, want one cached block", r.System)
	}
	if len(r.Tools) != 2 || r.Tools[0].InputSchema["type"] != "object" || r.Tools[0].InputSchema["additionalProperties"] != false ||
		!reflect.DeepEqual(r.Tools[0].InputSchema["required"], []any{"path"}) || r.Tools[1].InputSchema["type"] != "object" {
		t.Errorf("tools = %+v", r.Tools)
	}
	if r.Tools[0].CacheControl != nil || r.Tools[1].CacheControl == nil {
		t.Errorf("the cache breakpoint belongs on the last tool")
	}
	// user, assistant, user (tool result), assistant, user (tool result + note)
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user" {
		t.Fatalf("roles = %v", roles)
	}
	if b := r.Messages[0].Content; len(b) != 1 || b[0].Text != "the task" || b[0].CacheControl == nil {
		t.Errorf("the task message is the cached prefix: %+v", b)
	}
	if b := r.Messages[1].Content; len(b) != 2 || b[0].Text != "looking" || b[1].Type != "tool_use" || b[1].ID != "toolu_a" || string(b[1].Input) != "{}" {
		t.Errorf("assistant turn = %+v", b)
	}
	if b := r.Messages[2].Content; len(b) != 1 || b[0].Type != "tool_result" || b[0].ToolUseID != "toolu_a" || !b[0].IsError || b[0].ResultText() != "FAIL TestX" {
		t.Errorf("tool result = %+v", b)
	}
	var input map[string]any
	if b := r.Messages[3].Content; len(b) != 1 || json.Unmarshal(b[0].Input, &input) != nil || input["invalid_arguments"] != `{"path": "a.go", "blocks": ` {
		t.Errorf("a replayed call with invalid arguments is sent as an object holding them: %+v", b)
	}
	last := r.Messages[4].Content
	if len(last) != 2 || last[0].Type != "tool_result" || last[1].Text != "a note" || last[1].CacheControl == nil {
		t.Errorf("last turn = %+v, want the tool result and the note, cached at the end", last)
	}
}

func TestAnthropicMalformedToolInput(t *testing.T) {
	// A proxy that passes the model's arguments as a string, cut short.
	srv := llmtest.NewAnthropicServer(t, llmtest.Reply{
		ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "edit", Arguments: `{"path": "a.go", "blocks": `}},
	})
	resp, err := srv.LLM("m").Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"path": "a.go", "blocks": ` {
		t.Errorf("tool calls = %+v, want the arguments as written", resp.Message.ToolCalls)
	}
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		name          string
		reply         llmtest.Reply
		status        int
		message       string
		retryable     bool
		contextLength bool
	}{
		{"429 rate limit", llmtest.Reply{Status: 429, Body: llmtest.AnthropicErrorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")}, 429, "Number of request tokens has exceeded your per-minute rate limit", true, false},
		{"500", llmtest.Reply{Status: 500, Body: llmtest.AnthropicErrorBody("api_error", "Internal server error")}, 500, "Internal server error", true, false},
		{"529 overloaded", llmtest.Reply{Status: 529, Body: llmtest.AnthropicErrorBody("overloaded_error", "Overloaded")}, 529, "Overloaded", true, false},
		{"context length", llmtest.Reply{Status: 400, Body: llmtest.AnthropicErrorBody("invalid_request_error", "prompt is too long: 210345 tokens > 200000 maximum")}, 400, "prompt is too long: 210345 tokens > 200000 maximum", false, true},
		{"401", llmtest.Reply{Status: 401, Body: llmtest.AnthropicErrorBody("authentication_error", "invalid x-api-key")}, 401, "invalid x-api-key", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewAnthropicServer(t, tt.reply)
			_, err := srv.LLM("m").Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want an *llm.APIError", err, err)
			}
			if apiErr.StatusCode != tt.status || apiErr.Message != tt.message {
				t.Errorf("APIError = %+v, want %d %q", apiErr, tt.status, tt.message)
			}
			if llm.IsRetryable(err) != tt.retryable || llm.IsContextLength(err) != tt.contextLength {
				t.Errorf("retryable %v context length %v, want %v %v", llm.IsRetryable(err), llm.IsContextLength(err), tt.retryable, tt.contextLength)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests, want 1 (the SDK must not retry)", len(srv.Requests()))
			}
		})
	}
}

func TestNewClientProviders(t *testing.T) {
	ant := llmtest.NewAnthropicServer(t, llmtest.Reply{Content: "from anthropic"})
	oai := llmtest.NewServer(t, llmtest.Reply{Content: "from openai"})
	for _, tt := range []struct {
		provider, url, want string
	}{{llm.ProviderAnthropic, ant.URL, "from anthropic"}, {"", oai.URL, "from openai"}} {
		c, err := llm.NewClient(llm.Config{Provider: tt.provider, BaseURL: tt.url, Model: "m", APIKey: "k"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if err != nil || resp.Message.Content != tt.want {
			t.Errorf("provider %q: %q, %v", tt.provider, resp.Message.Content, err)
		}
	}
	if _, err := llm.NewClient(llm.Config{Provider: "gemini", Model: "m"}, nil); err == nil || !strings.Contains(err.Error(), "unknown provider") {
		t.Errorf("unknown provider: err = %v", err)
	}
}
