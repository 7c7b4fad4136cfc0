package triage

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redfix/redfix/pkg/task"
)

// Metrics count what the intake's triage made of the reports.
type Metrics struct {
	// reports settled by triage, by result: triaged, invalid (a report that
	// can never be triaged), gave_up (triage failed on its last attempt).
	reports *prometheus.CounterVec
	// outcomes of the failure groups: queued, dropped with a reason class,
	// or failed (the repository's setup failed; no verdict).
	outcomes *prometheus.CounterVec
	// duration of the triage of one report (reproduce, flakiness re-runs,
	// bisection of each of its failure groups), by result: triaged, failed.
	duration *prometheus.HistogramVec
}

// NewMetrics registers triage's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redfix_triage_reports_total",
			Help: "Reports triage settled, by result: triaged, invalid (can never be triaged), gave_up (failed on its last attempt).",
		}, []string{"result"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redfix_triage_outcomes_total",
			Help: "Failure groups triage decided, by outcome (queued, dropped, failed: the repository's setup failed and the next report tries again) and reason class (for dropped: flaky, not_reproduced, duplicate, ended_unfixed, same_blame, cannot_run, opted_out, fork, budget, already_fixed, human_fix, beyond_cap, other).",
		}, []string{"outcome", "reason"}),
	}
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "redfix_triage_duration_seconds",
		Help: "Time triage took on one report (reproduction, flakiness re-runs and bisection of its failure groups), by result: triaged, failed (the attempt failed; it is retried or given up).",
		// From a report whose groups were all decided before (a second)
		// to a bisection of a large range (over half an hour).
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"result"})
	for _, r := range []string{"triaged", "invalid", "gave_up"} {
		m.reports.WithLabelValues(r)
	}
	m.outcomes.WithLabelValues("queued", "")
	m.outcomes.WithLabelValues("failed", "")
	for _, c := range ReasonClasses {
		m.outcomes.WithLabelValues("dropped", c)
	}
	for _, r := range []string{"triaged", "failed"} {
		m.duration.WithLabelValues(r)
	}
	reg.MustRegister(m.reports, m.outcomes, m.duration)
	return m
}

// settled counts a report triage settled: triaged, invalid or gave_up.
func (m *Metrics) settled(result string) {
	if m != nil {
		m.reports.WithLabelValues(result).Inc()
	}
}

// decided counts what triage did with one failure group.
func (m *Metrics) decided(o Outcome) {
	if m == nil {
		return
	}
	switch o.Status {
	case task.StatusQueued:
		m.outcomes.WithLabelValues("queued", "").Inc()
	case task.StatusDropped:
		m.outcomes.WithLabelValues("dropped", ReasonClass(o.Reason)).Inc()
	case task.StatusFailed:
		m.outcomes.WithLabelValues("failed", "").Inc()
	}
}

// took times the triage of one report: triaged or failed.
func (m *Metrics) took(result string, d time.Duration) {
	if m != nil {
		m.duration.WithLabelValues(result).Observe(d.Seconds())
	}
}
