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
	PromptTokens     int
	CompletionTokens int
}

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
