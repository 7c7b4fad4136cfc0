package llm

import "github.com/prometheus/client_golang/prometheus"

// NewErrorCounter registers redfix_model_errors_total on reg: failed model
// calls, every attempt (retried or not), by the class ErrorClass gives the
// error. Config.OnError counts into it.
func NewErrorCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redfix_model_errors_total",
		Help: "Failed model calls (each attempt, retried or not) by class: rate_limit, server, context_length, auth, request, transport, other.",
	}, []string{"class"})
	for _, class := range ErrorClasses {
		c.WithLabelValues(class)
	}
	reg.MustRegister(c)
	return c
}
