package llm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
)

// sleeper records the waits instead of waiting.
type sleeper struct{ waits []time.Duration }

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func TestRetryHonoursRetryAfterBothProviders(t *testing.T) {
	hi := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			replies := []llmtest.Reply{
				{Status: 429, Header: http.Header{"Retry-After": {"7"}}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
				{Status: 500, Body: `{"type":"error","error":{"type":"api_error","message":"boom"}}`},
				{Content: "ok"},
			}
			var c llm.Client
			var count func() int
			if provider == llm.ProviderAnthropic {
				srv := llmtest.NewAnthropicServer(t, replies...)
				c, count = srv.LLM("m"), func() int { return len(srv.Requests()) }
			} else {
				srv := llmtest.NewServer(t, replies...)
				c, count = srv.LLM("m"), func() int { return len(srv.Requests()) }
			}
			s := &sleeper{}
			r := llm.NewRetrying(c, llm.RetryConfig{MaxRetries: 3, Base: time.Second, Sleep: s.Sleep})
			resp, err := r.Chat(context.Background(), llm.Request{Messages: hi})
			if err != nil || resp.Message.Content != "ok" {
				t.Fatalf("Chat = %q, %v", resp.Message.Content, err)
			}
			if count() != 3 || len(s.waits) != 2 {
				t.Fatalf("%d requests, waits %v; want 3 requests and 2 waits", count(), s.waits)
			}
			if s.waits[0] != 7*time.Second {
				t.Errorf("first wait %v, want the server's Retry-After of 7s", s.waits[0])
			}
			if s.waits[1] < 1500*time.Millisecond || s.waits[1] > 2*time.Second {
				t.Errorf("second wait %v, want the backoff of 2s less up to a quarter of jitter", s.waits[1])
			}
		})
	}
}

func TestRetryGivesUpAndSkipsPermanentErrors(t *testing.T) {
	hi := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	busy := llmtest.Reply{Status: 503, Body: `{"error":{"message":"busy"}}`}
	srv := llmtest.NewServer(t, busy, busy, busy)
	s := &sleeper{}
	_, err := llm.NewRetrying(srv.LLM("m"), llm.RetryConfig{MaxRetries: 2, Sleep: s.Sleep}).Chat(context.Background(), hi)
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") || !llm.IsRetryable(err) {
		t.Errorf("err = %v, want the last 503 after 3 attempts", err)
	}

	long := llmtest.NewServer(t, llmtest.Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`})
	s = &sleeper{}
	_, err = llm.NewRetrying(long.LLM("m"), llm.RetryConfig{MaxRetries: 5, Sleep: s.Sleep}).Chat(context.Background(), hi)
	if !llm.IsContextLength(err) || len(s.waits) != 0 || len(long.Requests()) != 1 {
		t.Errorf("context length: err = %v, waits %v, %d requests; want it returned at once", err, s.waits, len(long.Requests()))
	}

	ctx, cancel := context.WithCancel(context.Background())
	again := llmtest.NewServer(t, busy)
	_, err = llm.NewRetrying(again.LLM("m"), llm.RetryConfig{MaxRetries: 5, Sleep: func(context.Context, time.Duration) error {
		cancel()
		return context.Canceled
	}}).Chat(ctx, hi)
	if err == nil || len(again.Requests()) != 1 || !strings.Contains(err.Error(), "waiting to retry") {
		t.Errorf("cancelled while waiting: err = %v after %d requests", err, len(again.Requests()))
	}
}

func TestRetryAfterForms(t *testing.T) {
	r := llm.NewRetrying(nil, llm.RetryConfig{Base: time.Millisecond, MaxRetryAfter: time.Minute})
	for _, tt := range []struct {
		after time.Duration
		want  time.Duration
	}{{30 * time.Second, 30 * time.Second}, {time.Hour, time.Minute}} {
		if got := r.Backoff(0, &llm.APIError{StatusCode: 429, RetryAfter: tt.after}); got != tt.want {
			t.Errorf("Retry-After %v: wait %v, want %v", tt.after, got, tt.want)
		}
	}
}

func TestMeterCountsAndPrices(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.Reply{Content: "a"}, llmtest.Reply{Content: "b"})
	srv.Usage = map[string]int{"input_tokens": 1000, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 0, "output_tokens": 100}
	m := llm.NewMeter(srv.LLM("m"), llm.Price{Input: 3, CachedInput: 0.3, Output: 15})
	var seen int
	m.OnCall = func(model string, s llm.Spend) { seen += s.Calls }
	for i := 0; i < 2; i++ {
		if _, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	got := m.Spent()
	// per call: 1000·3 + 2000·0.3 + 100·15 = 5100 per million = $0.0051
	if got.Calls != 2 || seen != 2 || got.PromptTokens != 6000 || got.CachedTokens != 4000 || got.CompletionTokens != 200 {
		t.Errorf("spent = %+v (OnCall saw %d)", got, seen)
	}
	if d := got.CostUSD - 0.0102; d > 1e-9 || d < -1e-9 {
		t.Errorf("cost = %v, want 0.0102", got.CostUSD)
	}
}

// A meter shared by tasks (the judge's) charges each call to the tally its
// context carries, and only to that one.
func TestMeterChargesTheCallersTally(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.Reply{Content: "a"}, llmtest.Reply{Content: "b"}, llmtest.Reply{Content: "c"})
	srv.Usage = map[string]int{"input_tokens": 1000, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 10}
	m := llm.NewMeter(srv.LLM("m"), llm.Price{Input: 1, Output: 10})
	var one, two llm.Tally
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for _, ctx := range []context.Context{llm.WithTally(context.Background(), &one), llm.WithTally(context.Background(), &two), llm.WithTally(context.Background(), &two)} {
		if _, err := m.Chat(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if got := one.Spent(); got.Calls != 1 || got.PromptTokens != 1000 || got.CompletionTokens != 10 {
		t.Errorf("first tally = %+v", got)
	}
	if got := two.Spent(); got.Calls != 2 || got.PromptTokens != 2000 || got.CompletionTokens != 20 || got.CostUSD < 0.0021999 || got.CostUSD > 0.0022001 {
		t.Errorf("second tally = %+v", got)
	}
	if got := m.Spent(); got.Calls != 3 {
		t.Errorf("meter = %+v", got)
	}
}
