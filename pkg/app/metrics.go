package app

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redfix/redfix/pkg/triage"
)

// buildVersion and buildRevision, when set at link time (an image built
// without its .git: -ldflags "-X github.com/redfix/redfix/pkg/app.buildRevision=SHA"),
// take the place of what the toolchain stamped.
var buildVersion, buildRevision string

// registerBuildInfo exports redfix_build_info{version,revision,goversion} 1,
// from the values set at link time or, without them, the build information
// the Go toolchain stamps into the binary (buildLabels).
func registerBuildInfo(reg prometheus.Registerer) {
	bi, _ := debug.ReadBuildInfo()
	version, revision, goversion := buildLabels(bi, buildVersion, buildRevision)
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "redfix_build_info",
		Help:        "Always 1; the labels name the build: module version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goversion},
	})
	g.Set(1)
	reg.MustRegister(g)
}

// buildLabels chooses redfix_build_info's labels. Values set at link time
// win. Otherwise they come from bi, the build information of the binary:
// the main module's version, and the VCS revision the toolchain stamps
// when it builds in a checkout (vcs.revision; unless -buildvcs=false),
// with "-dirty" when the work tree had uncommitted changes (vcs.modified).
// What neither says is "unknown".
func buildLabels(bi *debug.BuildInfo, linkVersion, linkRevision string) (version, revision, goversion string) {
	version, revision, goversion = "unknown", "unknown", "unknown"
	if bi != nil {
		goversion = bi.GoVersion
		if v := bi.Main.Version; v != "" {
			version = v
		}
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			revision = rev
			if modified {
				revision += "-dirty"
			}
		}
	}
	if linkVersion != "" {
		version = linkVersion
	}
	if linkRevision != "" {
		revision = linkRevision
	}
	if goversion == "" {
		goversion = "unknown"
	}
	return version, revision, goversion
}

// triageMetrics count what triage made of the reports.
type triageMetrics struct {
	// reports settled by triage, by result: triaged, invalid (a report that
	// can never be triaged), gave_up (triage failed on its last attempt).
	reports *prometheus.CounterVec
	// outcomes of the failure groups: queued, or dropped with a reason class.
	outcomes *prometheus.CounterVec
	// duration of the triage of one report (reproduce, flakiness re-runs,
	// bisection of each of its failure groups), by result: triaged, failed.
	duration *prometheus.HistogramVec
}

func newTriageMetrics(reg prometheus.Registerer) *triageMetrics {
	m := &triageMetrics{
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redfix_triage_reports_total",
			Help: "Reports triage settled, by result: triaged, invalid (can never be triaged), gave_up (failed on its last attempt).",
		}, []string{"result"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redfix_triage_outcomes_total",
			Help: "Failure groups triage decided, by outcome (queued, dropped) and reason class (for dropped: flaky, not_reproduced, duplicate, ended_unfixed, same_blame, cannot_run, opted_out, budget, already_fixed, human_fix, beyond_cap, other).",
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
	for _, c := range triage.ReasonClasses {
		m.outcomes.WithLabelValues("dropped", c)
	}
	for _, r := range []string{"triaged", "failed"} {
		m.duration.WithLabelValues(r)
	}
	reg.MustRegister(m.reports, m.outcomes, m.duration)
	return m
}
