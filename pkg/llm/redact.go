package llm

import (
	"context"

	"github.com/redfix/redfix/pkg/redact"
)

// Redacting is a model client whose every request is redacted by Redactor
// before Client sends it: the prompts, tool observations and tool calls a
// policy, the patcher or the judge sends. The caller's request is not
// changed.
type Redacting struct {
	Client
	Redactor *redact.Redactor
}

// Chat sends req, redacted.
func (c Redacting) Chat(ctx context.Context, req Request) (Response, error) {
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = c.Redactor.String(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := make([]ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				tc.Arguments = c.Redactor.String(tc.Arguments)
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		msgs[i] = m
	}
	req.Messages = msgs
	return c.Client.Chat(ctx, req)
}
