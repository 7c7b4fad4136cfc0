package worker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/redfix/redfix/pkg/llm"
)

// spendMetrics count what the agents' model calls used and cost.
type spendMetrics struct {
	calls  prometheus.Counter
	tokens *prometheus.CounterVec
	cost   prometheus.Counter
}

func newSpendMetrics(reg prometheus.Registerer) *spendMetrics {
	m := &spendMetrics{
		calls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "redfix_llm_calls_total",
			Help: "Model calls made by the agents (policy and patcher).",
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redfix_llm_tokens_total",
			Help: "Tokens the agents' model calls used, by kind: input (cached ones included), cached (read from the prompt cache), output.",
		}, []string{"kind"}),
		cost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "redfix_llm_cost_usd_total",
			Help: "What the agents' model calls cost, in US dollars, from the configured price table.",
		}),
	}
	for _, k := range []string{"input", "cached", "output"} {
		m.tokens.WithLabelValues(k)
	}
	reg.MustRegister(m.calls, m.tokens, m.cost)
	return m
}

func (m *spendMetrics) add(s llm.Spend) {
	if m == nil || s.Calls == 0 {
		return
	}
	m.calls.Add(float64(s.Calls))
	m.tokens.WithLabelValues("input").Add(float64(s.PromptTokens))
	m.tokens.WithLabelValues("cached").Add(float64(s.CachedTokens))
	m.tokens.WithLabelValues("output").Add(float64(s.CompletionTokens))
	m.cost.Add(s.CostUSD)
}
