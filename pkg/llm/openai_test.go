package llm_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

func TestNewOpenAIRequiresModel(t *testing.T) {
	if _, err := llm.NewOpenAI(llm.Config{BaseURL: "http://127.0.0.1:1"}); err == nil {
		t.Fatal("NewOpenAI with no model: want an error")
	}
	if _, err := llm.NewOpenAI(llm.Config{Model: "m", MaxRetries: -1}); err == nil {
		t.Fatal("NewOpenAI with negative retries: want an error")
	}
}

func TestChatSendsRequestAndParsesToolCall(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{
		Content:   "Let me read the file.",
		ToolCalls: []llm.ToolCall{{ID: "call_abc", Name: "read_file", Arguments: `{"path":"a.go"}`}},
	})
	c := srv.LLM("qwen-coder")
	if c.Model() != "qwen-coder" {
		t.Fatalf("Model() = %q", c.Model())
	}
	temp := 0.25
	resp, err := c.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "sys"},
			{Role: llm.RoleUser, Content: "fix it"},
			{Role: llm.RoleAssistant, Content: "looking", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "run_tests", Arguments: `{}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: "FAIL TestX"},
		},
		Tools: []llm.Tool{
			{Name: "read_file", Description: "Read a file.", Parameters: map[string]any{
				"type":       "object",
				"properties": map[string]any{"path": map[string]any{"type": "string"}},
				"required":   []any{"path"},
			}},
			{Name: "run_tests"},
		},
		Temperature: &temp,
		MaxTokens:   512,
		JSON:        true,
	})
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}

	want := llm.Response{
		Message: llm.Message{
			Role:      llm.RoleAssistant,
			Content:   "Let me read the file.",
			ToolCalls: []llm.ToolCall{{ID: "call_abc", Name: "read_file", Arguments: `{"path":"a.go"}`}},
		},
		FinishReason: "tool_calls",
		Usage:        llm.Usage{PromptTokens: 100, CompletionTokens: 10},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response:\n got %+v\nwant %+v", resp, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "qwen-coder" {
		t.Errorf("model = %q", r.Model)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization = %q", got)
	}
	roles := []string{}
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"system", "user", "assistant", "tool"}) {
		t.Errorf("roles = %v", roles)
	}
	if got := r.Messages[1].Text(); got != "fix it" {
		t.Errorf("user content = %q", got)
	}
	a := r.Messages[2]
	if a.Text() != "looking" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_1" ||
		a.ToolCalls[0].Type != "function" || a.ToolCalls[0].Function.Name != "run_tests" ||
		a.ToolCalls[0].Function.Arguments != "{}" {
		t.Errorf("assistant message = %+v", a)
	}
	if tm := r.Messages[3]; tm.ToolCallID != "call_1" || tm.Text() != "FAIL TestX" {
		t.Errorf("tool message = %+v", tm)
	}
	if len(r.Tools) != 2 {
		t.Fatalf("%d tools, want 2", len(r.Tools))
	}
	if tool := r.Tools[0]; tool.Type != "function" || tool.Function.Name != "read_file" ||
		tool.Function.Description != "Read a file." || tool.Function.Parameters["type"] != "object" {
		t.Errorf("tool[0] = %+v", tool)
	}
	if p := r.Tools[1].Function.Parameters; p["type"] != "object" {
		t.Errorf("a tool without parameters gets an empty object schema, got %v", p)
	}
	if r.Raw["temperature"] != 0.25 {
		t.Errorf("temperature = %v", r.Raw["temperature"])
	}
	if r.Raw["max_tokens"] != 512.0 {
		t.Errorf("max_tokens = %v (self-hosted servers get max_tokens)", r.Raw["max_tokens"])
	}
	if rf, _ := r.Raw["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Errorf("response_format = %v", r.Raw["response_format"])
	}
}

func TestChatOmitsUnsetOptions(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-environment")
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "done"})
	c, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "done" || resp.FinishReason != "stop" || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("response = %+v", resp)
	}
	r := srv.Requests()[0]
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q: the environment's key must not leak to a configured server", got)
	}
	for _, k := range []string{"temperature", "max_tokens", "max_completion_tokens", "tools", "response_format"} {
		if v, ok := r.Raw[k]; ok {
			t.Errorf("%s = %v, want it absent", k, v)
		}
	}
}

func TestChatArgumentsAsObject(t *testing.T) {
	// Some servers put the arguments as a JSON object rather than a string.
	srv := llmtest.NewServer(t, llmtest.Reply{Body: `{"id":"x","object":"chat.completion","created":1,"model":"m",
		"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
		"tool_calls":[{"id":"c1","type":"function","function":{"name":"find_file","arguments":{"pattern":"*.go"}}}]}}],
		"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`})
	resp, err := srv.LLM("m").Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "c1", Name: "find_file", Arguments: `{"pattern":"*.go"}`}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
		t.Errorf("tool calls = %+v, want %+v", resp.Message.ToolCalls, want)
	}
}

func TestChatErrors(t *testing.T) {
	tests := []struct {
		name      string
		reply     llmtest.Reply
		status    int
		message   string
		retryable bool
	}{
		{
			name:    "401 OpenAI style",
			reply:   llmtest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`},
			status:  401,
			message: "Incorrect API key provided",
		},
		{
			name:    "404 unknown model, vLLM top-level style",
			reply:   llmtest.Reply{Status: 404, Body: `{"object":"error","message":"The model 'x' does not exist.","type":"NotFoundError","code":404}`},
			status:  404,
			message: "The model 'x' does not exist.",
		},
		{
			name:      "500 plain text",
			reply:     llmtest.Reply{Status: 500, Body: "Internal Server Error\n"},
			status:    500,
			message:   "Internal Server Error",
			retryable: true,
		},
		{
			name:      "429 rate limit",
			reply:     llmtest.Reply{Status: 429, Body: `{"error":{"message":"Rate limit reached","type":"requests"}}`},
			status:    429,
			message:   "Rate limit reached",
			retryable: true,
		},
		{
			name:      "503 Ollama style",
			reply:     llmtest.Reply{Status: 503, Body: `{"error":"server busy, please try again"}`},
			status:    503,
			message:   "server busy, please try again",
			retryable: true,
		},
		{
			name:    "422 FastAPI detail",
			reply:   llmtest.Reply{Status: 422, Body: `{"detail":"messages: field required"}`},
			status:  422,
			message: "messages: field required",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tt.reply)
			_, err := srv.LLM("m").Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want an *llm.APIError", err, err)
			}
			if apiErr.StatusCode != tt.status || apiErr.Message != tt.message {
				t.Errorf("APIError = %+v, want status %d message %q", apiErr, tt.status, tt.message)
			}
			if got := llm.IsRetryable(err); got != tt.retryable {
				t.Errorf("IsRetryable = %v, want %v", got, tt.retryable)
			}
			if !strings.Contains(err.Error(), "chat with m") || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error text %q lacks the operation or the server's message", err)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests with retries off, want 1", len(srv.Requests()))
			}
		})
	}
}

func TestChatRetriesWhenConfigured(t *testing.T) {
	fast := http.Header{"Retry-After-Ms": {"1"}}
	srv := llmtest.NewServer(t,
		llmtest.Reply{Status: 503, Body: `{"error":{"message":"loading model"}}`, Header: fast},
		llmtest.Reply{Content: "ok"},
	)
	c, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, Model: "m", MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Message.Content != "ok" || len(srv.Requests()) != 2 {
		t.Errorf("content %q after %d requests, want ok after 2", resp.Message.Content, len(srv.Requests()))
	}
}

func TestChatTransportErrors(t *testing.T) {
	srv := llmtest.NewServer(t)
	url := srv.URL
	srv.Close()
	c, err := llm.NewOpenAI(llm.Config{BaseURL: url, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	_, err = c.Chat(context.Background(), req)
	if err == nil || !llm.IsRetryable(err) {
		t.Errorf("connection refused: err = %v, retryable = %v; want a retryable error", err, llm.IsRetryable(err))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Chat(ctx, req)
	if err == nil || llm.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled, not retryable", err)
	}
}

func TestChatRejectsBadMessages(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := srv.LLM("m")
	for _, m := range []llm.Message{{Role: "wizard", Content: "x"}, {Role: llm.RoleTool, Content: "x"}} {
		if _, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{m}}); err == nil {
			t.Errorf("message %+v: want an error", m)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid messages", n)
	}
}

func TestIsRetryable(t *testing.T) {
	if llm.IsRetryable(nil) || llm.IsRetryable(errors.New("x")) {
		t.Error("plain errors are not retryable")
	}
	if !llm.IsRetryable(&llm.APIError{StatusCode: 502}) || llm.IsRetryable(&llm.APIError{StatusCode: 400}) {
		t.Error("502 is retryable, 400 is not")
	}
}
