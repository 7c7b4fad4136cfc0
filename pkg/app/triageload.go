package app

import (
	"context"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// triageSlots is how many reports triage works on at once: the configured
// number, or the CPUs, never more than the CPUs (each runs go test).
func triageSlots(configured int) int {
	n := runtime.NumCPU()
	if configured <= 0 || configured > n {
		return n
	}
	return configured
}

// registerBacklogMetric exposes the reports waiting for triage.
func (s *System) registerBacklogMetric() {
	s.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "redfix_triage_backlog_reports",
		Help: "Reports stored and not yet triaged (waiting or being triaged); -1 when the stream does not answer.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := s.Intake.Stream().Lag(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	}))
}
