package llm

import (
	"context"
	"sync"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input       float64 `yaml:"input" json:"input"`
	CachedInput float64 `yaml:"cached_input" json:"cached_input"`
	CacheWrite  float64 `yaml:"cache_write" json:"cache_write"`
	Output      float64 `yaml:"output" json:"output"`
}

// Cost is what u costs at p, in dollars. Cached and cache-write tokens are
// billed at their own rates, the rest of the input at Input.
func (p Price) Cost(u Usage) float64 {
	plain := u.PromptTokens - u.CachedTokens - u.CacheWriteTokens
	if plain < 0 {
		plain = 0
	}
	return (float64(plain)*p.Input + float64(u.CachedTokens)*p.CachedInput +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.CompletionTokens)*p.Output) / 1e6
}

// Spend is what a run of model calls used.
type Spend struct {
	Calls int `json:"calls"`
	Usage
	CostUSD float64 `json:"cost_usd"`
}

// Add returns s plus t.
func (s Spend) Add(t Spend) Spend {
	return Spend{Calls: s.Calls + t.Calls, Usage: s.Usage.Add(t.Usage), CostUSD: s.CostUSD + t.CostUSD}
}

// Sub returns s minus t (the spend between two readings).
func (s Spend) Sub(t Spend) Spend {
	return Spend{
		Calls: s.Calls - t.Calls,
		Usage: Usage{
			PromptTokens:     s.PromptTokens - t.PromptTokens,
			CachedTokens:     s.CachedTokens - t.CachedTokens,
			CacheWriteTokens: s.CacheWriteTokens - t.CacheWriteTokens,
			CompletionTokens: s.CompletionTokens - t.CompletionTokens,
		},
		CostUSD: s.CostUSD - t.CostUSD,
	}
}

// Meter is a Client that counts what the calls through it used and cost.
// One meter per episode (policy and patcher share it) gives the episode's
// spend; OnCall, when set, sees each call (for metrics).
type Meter struct {
	next   Client
	price  Price
	OnCall func(model string, s Spend)

	mu    sync.Mutex
	spent Spend
}

var _ Client = (*Meter)(nil)

// NewMeter wraps c, pricing its calls at price.
func NewMeter(c Client, price Price) *Meter { return &Meter{next: c, price: price} }

// Model is the wrapped client's model.
func (m *Meter) Model() string { return m.next.Model() }

// Chat calls the wrapped client and counts the answer's usage.
func (m *Meter) Chat(ctx context.Context, req Request) (Response, error) {
	resp, err := m.next.Chat(ctx, req)
	if err != nil {
		return resp, err
	}
	s := Spend{Calls: 1, Usage: resp.Usage, CostUSD: m.price.Cost(resp.Usage)}
	m.mu.Lock()
	m.spent = m.spent.Add(s)
	m.mu.Unlock()
	if t, _ := ctx.Value(tallyKey{}).(*Tally); t != nil {
		t.add(s)
	}
	if m.OnCall != nil {
		m.OnCall(m.next.Model(), s)
	}
	return resp, nil
}

// Spent is the total so far.
func (m *Meter) Spent() Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent
}

// Tally adds up what the calls made with a context carrying it (WithTally)
// spent, through whichever meter they went: a meter shared by many tasks
// (the judge's) still charges each call to its own task.
type Tally struct {
	mu    sync.Mutex
	spent Spend
}

type tallyKey struct{}

// WithTally makes the metered calls made with ctx count into t as well.
func WithTally(ctx context.Context, t *Tally) context.Context {
	return context.WithValue(ctx, tallyKey{}, t)
}

func (t *Tally) add(s Spend) {
	t.mu.Lock()
	t.spent = t.spent.Add(s)
	t.mu.Unlock()
}

// Spent is the total so far.
func (t *Tally) Spent() Spend {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent
}
