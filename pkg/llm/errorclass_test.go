package llm_test

import (
	"context"
	"net"
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

// Each failed attempt is heard with its class, as NewClient's clients
// classify it, from a real HTTP server's answers.
func TestNewClientReportsErrorClasses(t *testing.T) {
	hi := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	cases := []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"rate limited", llmtest.Reply{Status: 429, Body: `{"error":{"message":"slow down","type":"rate_limit_error"}}`}, llm.ErrorRateLimit},
		{"server error", llmtest.Reply{Status: 503, Body: `{"error":{"message":"busy"}}`}, llm.ErrorServer},
		{"bad key", llmtest.Reply{Status: 401, Body: `{"error":{"message":"invalid api key","type":"invalid_request_error"}}`}, llm.ErrorAuth},
		{"unknown model", llmtest.Reply{Status: 404, Body: `{"error":{"message":"the model m does not exist","code":"model_not_found"}}`}, llm.ErrorRequest},
		{"context length", llmtest.Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`}, llm.ErrorContextLength},
		{"not JSON", llmtest.Reply{Status: 200, Body: `<html>proxy page</html>`}, llm.ErrorOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, c.reply)
			var heard []string
			client, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "m", OnError: func(class string) { heard = append(heard, class) }}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.Chat(context.Background(), hi); err == nil {
				t.Fatal("the call succeeded")
			} else if got := llm.ErrorClass(err); got != c.want {
				t.Errorf("ErrorClass(%v) = %s, want %s", err, got, c.want)
			}
			if !slices.Equal(heard, []string{c.want}) {
				t.Errorf("heard %v, want [%s]", heard, c.want)
			}
		})
	}
}

// A server that does not answer is a transport error; every retried
// attempt is heard, and a call the caller cancels is not.
func TestRetryingReportsEveryFailedAttempt(t *testing.T) {
	hi := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	down, err := llm.NewOpenAI(llm.Config{BaseURL: "http://" + addr, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var heard []string
	s := &sleeper{}
	r := llm.NewRetrying(down, llm.RetryConfig{MaxRetries: 2, Sleep: s.Sleep, OnError: func(c string) { heard = append(heard, c) }})
	if _, err := r.Chat(context.Background(), hi); err == nil {
		t.Fatal("a call to nothing succeeded")
	}
	if want := []string{llm.ErrorTransport, llm.ErrorTransport, llm.ErrorTransport}; !slices.Equal(heard, want) {
		t.Errorf("heard %v, want %v", heard, want)
	}

	busy := llmtest.Reply{Status: 503, Body: `{"error":{"message":"busy"}}`}
	srv := llmtest.NewServer(t, busy, llmtest.Reply{Content: "ok"})
	heard = nil
	r = llm.NewRetrying(srv.LLM("m"), llm.RetryConfig{MaxRetries: 2, Sleep: s.Sleep, OnError: func(c string) { heard = append(heard, c) }})
	if _, err := r.Chat(context.Background(), hi); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(heard, []string{llm.ErrorServer}) {
		t.Errorf("a 503 then a success: heard %v, want [server]", heard)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	heard = nil
	slow := llmtest.NewServer(t, llmtest.Reply{Content: "late"})
	r = llm.NewRetrying(slow.LLM("m"), llm.RetryConfig{OnError: func(c string) { heard = append(heard, c) }})
	if _, err := r.Chat(ctx, hi); err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if len(heard) != 0 {
		t.Errorf("a call the caller cancelled was heard as %v", heard)
	}
}
