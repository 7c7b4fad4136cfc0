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

// AnthropicServer is a scripted server for Anthropic's Messages API
// (POST /v1/messages). Replies are the same as Server's: Content becomes a
// text block, ToolCalls tool_use blocks (Arguments is the input object as
// JSON text, sent as it is when it is an object and as a string otherwise),
// FinishReason the stop_reason ("tool_use" or "end_turn" by default).
type AnthropicServer struct {
	*httptest.Server
	t testing.TB
	// Usage, when set, is the usage every answer reports; otherwise input
	// 100+n, output 10+n.
	Usage map[string]int

	mu       sync.Mutex
	replies  []Reply
	requests []AnthropicRequest
}

// AnthropicRequest is what a client sent, decoded from the wire.
type AnthropicRequest struct {
	Header    http.Header
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    []AnthropicBlock   `json:"system"`
	Messages  []AnthropicMessage `json:"messages"`
	Tools     []AnthropicTool    `json:"tools"`
	// Raw is the whole JSON body.
	Raw map[string]any `json:"-"`
}

// AnthropicMessage is one turn as sent on the wire.
type AnthropicMessage struct {
	Role    string           `json:"role"`
	Content []AnthropicBlock `json:"content"`
}

// AnthropicBlock is a content block as sent on the wire (text, tool_use,
// tool_result).
type AnthropicBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Content      json.RawMessage `json:"content,omitempty"`
	CacheControl *struct {
		Type string `json:"type"`
	} `json:"cache_control,omitempty"`
}

// ResultText is a tool_result block's text.
func (b AnthropicBlock) ResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(b.Content, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out
}

// AnthropicTool is a tool definition as sent on the wire.
type AnthropicTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"input_schema"`
	CacheControl *struct {
		Type string `json:"type"`
	} `json:"cache_control,omitempty"`
}

// NewAnthropicServer starts a server that answers with replies, in order;
// it is closed when the test ends.
func NewAnthropicServer(t testing.TB, replies ...Reply) *AnthropicServer {
	t.Helper()
	s := &AnthropicServer{t: t, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// LLM returns a client of this server for model, with retries off.
func (s *AnthropicServer) LLM(model string) *llm.Anthropic {
	s.t.Helper()
	c, err := llm.NewAnthropic(llm.Config{BaseURL: s.URL, Model: model, APIKey: "test-key"})
	if err != nil {
		s.t.Fatalf("llmtest: %v", err)
	}
	return c
}

// Requests returns the requests received so far.
func (s *AnthropicServer) Requests() []AnthropicRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AnthropicRequest(nil), s.requests...)
}

func (s *AnthropicServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.t.Errorf("llmtest: unexpected %s %s", r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotFound, anthropicError("not_found_error", "not found"))
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		s.t.Errorf("llmtest: request without an anthropic-version header")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("llmtest: read body: %v", err)
		return
	}
	var req AnthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("llmtest: request body does not decode: %v\n%s", err, body)
	}
	_ = json.Unmarshal(body, &req.Raw)
	req.Header = r.Header.Clone()
	if req.MaxTokens <= 0 || len(req.Messages) == 0 || req.Messages[0].Role != "user" {
		writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", "max_tokens and messages starting with a user turn are required"))
		return
	}
	for i := 1; i < len(req.Messages); i++ {
		if req.Messages[i].Role == req.Messages[i-1].Role {
			s.t.Errorf("llmtest: messages %d and %d are both %s: turns must alternate", i-1, i, req.Messages[i].Role)
		}
	}

	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var reply Reply
	ok := n < len(s.replies)
	if ok {
		reply = s.replies[n]
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("llmtest: request %d is beyond the script's %d replies", n+1, len(s.replies))
		writeJSON(w, http.StatusInternalServerError, anthropicError("api_error", "no scripted reply"))
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
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	writeJSON(w, http.StatusOK, s.message(n, req.Model, reply))
}

func (s *AnthropicServer) message(n int, model string, r Reply) map[string]any {
	content := []map[string]any{}
	if r.Content != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Content})
	}
	for _, tc := range r.ToolCalls {
		var input any = tc.Arguments
		var obj map[string]any
		if json.Unmarshal([]byte(tc.Arguments), &obj) == nil {
			input = json.RawMessage(tc.Arguments)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
	}
	stop := r.FinishReason
	if stop == "" {
		stop = "end_turn"
		if len(r.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	usage := map[string]any{"input_tokens": 100 + n, "output_tokens": 10 + n, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
	for k, v := range s.Usage {
		usage[k] = v
	}
	return map[string]any{
		"id":            fmt.Sprintf("msg_%d", n+1),
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         usage,
	}
}

// AnthropicErrorBody is an error answer's body as the Messages API writes it.
func AnthropicErrorBody(typ, message string) string {
	b, _ := json.Marshal(anthropicError(typ, message))
	return string(b)
}

func anthropicError(typ, message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}}
}
