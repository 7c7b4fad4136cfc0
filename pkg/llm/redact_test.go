package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/redact"
)

const ownSecret = "own-bot-secret-0123"

type recordingClient struct{ got []llm.Request }

func (c *recordingClient) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	c.got = append(c.got, req)
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: "ok"}}, nil
}
func (c *recordingClient) Model() string { return "m" }

func TestModelRequestsAreRedacted(t *testing.T) {
	rec := &recordingClient{}
	c := llm.Redacting{Client: rec, Redactor: redact.New(ownSecret)}
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "you fix tests"},
		{Role: llm.RoleTool, Content: "test output: token " + ownSecret + " AKIAQ3EXAMPLEFAKE7ZK", ToolCallID: "1"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "2", Name: "read_file", Arguments: `{"path":"` + ownSecret + `"}`}}},
	}}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var sent strings.Builder
	for _, m := range rec.got[0].Messages {
		sent.WriteString(m.Content)
		for _, tc := range m.ToolCalls {
			sent.WriteString(tc.Arguments)
		}
	}
	if strings.Contains(sent.String(), ownSecret) || strings.Contains(sent.String(), "AKIAQ3EXAMPLEFAKE7ZK") {
		t.Fatalf("a secret reached the model: %s", sent.String())
	}
	if req.Messages[1].Content == rec.got[0].Messages[1].Content {
		t.Fatal("nothing was redacted")
	}
	if !strings.Contains(req.Messages[1].Content, ownSecret) {
		t.Fatal("the caller's request was changed in place")
	}
}
