// Package llm is redfix's provider-neutral view of a chat model: messages in,
// one assistant message (text and/or tool calls) out. Policies and the judge
// depend on Client; OpenAI implements it for any endpoint that speaks the
// OpenAI Chat Completions protocol (OpenAI, vLLM, Ollama, llama.cpp server, …).
package llm

import "context"

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string
	Content string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID names the call a tool message answers.
	ToolCallID string
	// IsError marks a tool message whose action failed (providers that
	// have a field for it send it).
	IsError bool
}

// ToolCall is a model's request to call one tool.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON object the model wrote, as written: it may be
	// invalid JSON, which is for the caller to report back to the model.
	Arguments string
}

// Tool describes a function the model may call.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any // a JSON Schema object
}

// Request is one chat completion request.
type Request struct {
	Messages []Message
	Tools    []Tool
	// Temperature is left to the server when nil.
	Temperature *float64
	// MaxTokens caps the answer's length; 0 leaves it to the server.
	MaxTokens int
	// JSON asks for an answer that is one JSON object (response_format
	// json_object); the prompt must still say which object.
	JSON bool
}

// Usage is what a request cost, in tokens.
type Usage struct {
	// PromptTokens counts every input token, cached ones included.
	PromptTokens int `json:"input_tokens"`
	// CachedTokens are the input tokens read from the provider's prompt
	// cache (billed at a discount); CacheWriteTokens those written to it.
	CachedTokens     int `json:"cached_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	CompletionTokens int `json:"output_tokens"`
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CachedTokens:     u.CachedTokens + v.CachedTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
	}
}

// Total is all tokens, in and out.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Response is the model's answer.
type Response struct {
	Message Message
	// FinishReason is the server's: "stop", "tool_calls", "length", …
	FinishReason string
	Usage        Usage
}

// Client is a chat model.
type Client interface {
	Chat(ctx context.Context, req Request) (Response, error)
	Model() string
}
