package sandbox

import "github.com/prometheus/client_golang/prometheus"

// Gauge is redfix_sandbox_confined{mode}: 1 when the commands run for
// repositories are confined, 0 when they run as redfix's own user; mode is
// the configured sandbox.mode.
type Gauge struct {
	g    *prometheus.GaugeVec
	mode string
}

// NewGauge registers the gauge on reg, at 0 until Set says otherwise.
func NewGauge(reg prometheus.Registerer, mode string) *Gauge {
	g := &Gauge{g: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "redfix_sandbox_confined",
		Help: "1 when the commands run for repositories (tests, builds) are confined by the sandbox, 0 when they run unconfined; mode is the configured sandbox.mode (auto, required, off).",
	}, []string{"mode"}), mode: mode}
	g.g.WithLabelValues(mode).Set(0)
	reg.MustRegister(g.g)
	return g
}

// Set says whether the commands are confined.
func (g *Gauge) Set(confined bool) {
	v := 0.0
	if confined {
		v = 1
	}
	g.g.WithLabelValues(g.mode).Set(v)
}
