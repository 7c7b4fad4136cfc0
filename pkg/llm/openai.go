package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultBaseURL is OpenAI's own endpoint, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Providers that NewClient knows.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Config says which provider, endpoint and model to use.
type Config struct {
	// Provider is ProviderOpenAI (any OpenAI-compatible server; the
	// default) or ProviderAnthropic; only NewClient reads it.
	Provider string
	// BaseURL is the API root, e.g. http://localhost:8000/v1 for vLLM,
	// http://localhost:11434/v1 for Ollama. Empty means OpenAI.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (most self-hosted
	// servers need none).
	APIKey string
	Model  string
	// Timeout bounds each HTTP attempt; 0 leaves it to the caller's context.
	Timeout time.Duration
	// MaxRetries is how many times 408/409/429/5xx answers and connection
	// failures are retried, with backoff; 0 makes one attempt.
	MaxRetries int
	// OnError, when set, hears the class of every failed attempt
	// (ErrorClass); only NewClient reads it.
	OnError func(class string)
}

// OpenAI is a Client for the Chat Completions protocol.
type OpenAI struct {
	svc   openai.ChatCompletionService
	model string
	// maxCompletionTokens selects the max_completion_tokens field (OpenAI's
	// own API, required by its reasoning models) over max_tokens (which every
	// self-hosted server understands).
	maxCompletionTokens bool
}

var _ Client = (*OpenAI)(nil)

// NewOpenAI returns a client for cfg. Nothing is read from the environment:
// OPENAI_API_KEY and OPENAI_BASE_URL are ignored, so that a key meant for
// OpenAI never reaches a self-hosted server by accident.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("llm: no model configured")
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("llm: negative MaxRetries %d", cfg.MaxRetries)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("llm: negative Timeout %s", cfg.Timeout)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	opts := []option.RequestOption{
		option.WithHTTPClient(&http.Client{Transport: transport}),
		option.WithBaseURL(base),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	return &OpenAI{
		// The service alone, not openai.NewClient: NewClient reads OPENAI_*
		// variables from the environment.
		svc:                 openai.NewChatCompletionService(opts...),
		model:               cfg.Model,
		maxCompletionTokens: cfg.BaseURL == "",
	}, nil
}

// Model is the configured model's name.
func (c *OpenAI) Model() string { return c.model }

// Chat sends one chat completion request. HTTP error answers come back as
// *APIError (wrapped); IsRetryable tells which are worth another try.
func (c *OpenAI) Chat(ctx context.Context, req Request) (Response, error) {
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
	if len(out.Choices) == 0 {
		return Response{}, fmt.Errorf("chat with %s: the answer has no choices", c.model)
	}
	choice := out.Choices[0]
	msg := Message{Role: RoleAssistant, Content: choice.Message.Content}
	if msg.Content == "" && choice.Message.Refusal != "" {
		msg.Content = choice.Message.Refusal
	}
	for _, tc := range choice.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never offered
		}
		args := tc.Function.Arguments
		if args == "" {
			// Some servers send the arguments as an object, not a string.
			if raw := strings.TrimSpace(tc.Function.JSON.Arguments.Raw()); strings.HasPrefix(raw, "{") {
				args = raw
			}
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return Response{
		Message:      msg,
		FinishReason: choice.FinishReason,
		Usage: Usage{
			PromptTokens:     int(out.Usage.PromptTokens),
			CachedTokens:     int(out.Usage.PromptTokensDetails.CachedTokens),
			CompletionTokens: int(out.Usage.CompletionTokens),
		},
	}, nil
}

func (c *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: c.model}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      tc.Name,
							Arguments: tc.Arguments,
						},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			if m.ToolCallID == "" {
				return p, fmt.Errorf("message %d: tool message without a tool call id", i)
			}
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		default:
			return p, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fn := shared.FunctionDefinitionParam{
			Name:       t.Name,
			Parameters: shared.FunctionParameters(params),
		}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if c.maxCompletionTokens {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.JSON {
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	}
	return p, nil
}
