// Package llmtest serves scripted chat completions over real HTTP, speaking
// the OpenAI Chat Completions protocol, and records what clients sent, so that
// tests of model-driven code check both sides of the conversation.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/redfix/redfix/pkg/llm"
)

// Reply is one scripted answer, served in order.
type Reply struct {
	Content   string
	ToolCalls []llm.ToolCall
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	FinishReason string
	// Body, when set, is sent as it is instead of a completion built from
	// the fields above, with Status (200 when 0): error answers, odd servers.
	Status int
	Body   string
	// Header is added to the answer (Retry-After-Ms, …).
	Header http.Header
}

// Request is what a client sent, decoded from the wire.
type Request struct {
	Header   http.Header
	Model    string
	Messages []Message
	Tools    []Tool
	// Raw is the whole JSON body, for fields not decoded above.
	Raw map[string]any
}

// Message is a request message as sent on the wire.
type Message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
}

// Text is the message's content, "" when absent.
func (m Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// ToolCall is a tool call as sent on the wire.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a tool definition as sent on the wire.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

// Server is a scripted chat-completions server.
type Server struct {
	*httptest.Server
	t testing.TB

	mu       sync.Mutex
	replies  []Reply
	answer   func(n int, req Request) Reply // set by NewServerFunc
	requests []Request
}

// NewServer starts a server that answers POST /chat/completions with
// replies, in order; it is closed when the test ends. A request beyond the
// script fails the test and gets a 500.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// NewServerFunc starts a server whose answer to the n-th request (0-based)
// is answer's: for scripts that depend on what is asked (an agent's turn
// or a judge's question) rather than on the order alone.
func NewServerFunc(t testing.TB, answer func(n int, req Request) Reply) *Server {
	t.Helper()
	s := &Server{t: t, answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// LLM returns a client of this server for model, with retries off.
func (s *Server) LLM(model string) *llm.OpenAI {
	s.t.Helper()
	c, err := llm.NewOpenAI(llm.Config{BaseURL: s.URL, Model: model, APIKey: "test-key"})
	if err != nil {
		s.t.Fatalf("llmtest: %v", err)
	}
	return c
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/chat/completions" {
		s.t.Errorf("llmtest: unexpected %s %s", r.Method, r.URL.Path)
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("llmtest: read body: %v", err)
		return
	}
	req := Request{Header: r.Header.Clone()}
	var wire struct {
		Model    string    `json:"model"`
		Messages []Message `json:"messages"`
		Tools    []Tool    `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		s.t.Errorf("llmtest: request body is not JSON: %v\n%s", err, body)
	}
	_ = json.Unmarshal(body, &req.Raw)
	req.Model, req.Messages, req.Tools = wire.Model, wire.Messages, wire.Tools

	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var reply Reply
	ok := n < len(s.replies)
	if ok {
		reply = s.replies[n]
	}
	answer := s.answer
	s.mu.Unlock()
	if answer != nil {
		reply, ok = answer(n, req), true
	}

	if !ok {
		s.t.Errorf("llmtest: request %d is beyond the script's %d replies", n+1, len(s.replies))
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": "no scripted reply"}})
		return
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if reply.Body != "" || reply.Status != 0 {
		status := reply.Status
		if status == 0 {
			status = http.StatusOK
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	writeJSON(w, http.StatusOK, completion(n, wire.Model, reply))
}

func completion(n int, model string, r Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": r.Content}
	if r.Content == "" {
		msg["content"] = nil
	}
	finish := r.FinishReason
	if len(r.ToolCalls) > 0 {
		calls := make([]map[string]any, 0, len(r.ToolCalls))
		for _, tc := range r.ToolCalls {
			calls = append(calls, map[string]any{
				"id":       tc.ID,
				"type":     "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments},
			})
		}
		msg["tool_calls"] = calls
		if finish == "" {
			finish = "tool_calls"
		}
	}
	if finish == "" {
		finish = "stop"
	}
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", n+1),
		"object":  "chat.completion",
		"created": 1700000000 + n,
		"model":   model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       msg,
			"finish_reason": finish,
			"logprobs":      nil,
		}},
		"usage": map[string]any{"prompt_tokens": 100 + n, "completion_tokens": 10 + n, "total_tokens": 110 + 2*n},
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
