package app

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/stream"
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

// newModelErrors registers redfix_model_errors_total: failed model calls,
// every attempt (retried or not), by the class pkg/llm gives the error.
func newModelErrors(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redfix_model_errors_total",
		Help: "Failed model calls (each attempt, retried or not) by class: rate_limit, server, context_length, auth, request, transport, other.",
	}, []string{"class"})
	for _, class := range llm.ErrorClasses {
		c.WithLabelValues(class)
	}
	reg.MustRegister(c)
	return c
}

// sandboxGauge is redfix_sandbox_confined{mode}: 1 when the commands run
// for repositories are confined, 0 when they run as redfix's own user;
// mode is the configured sandbox.mode.
type sandboxGauge struct {
	g    *prometheus.GaugeVec
	mode string
}

func newSandboxGauge(reg prometheus.Registerer, mode string) *sandboxGauge {
	g := &sandboxGauge{g: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "redfix_sandbox_confined",
		Help: "1 when the commands run for repositories (tests, builds) are confined by the sandbox, 0 when they run unconfined; mode is the configured sandbox.mode (auto, required, off).",
	}, []string{"mode"}), mode: mode}
	g.g.WithLabelValues(mode).Set(0)
	reg.MustRegister(g.g)
	return g
}

func (g *sandboxGauge) set(confined bool) {
	v := 0.0
	if confined {
		v = 1
	}
	g.g.WithLabelValues(g.mode).Set(v)
}

// streamReader reads a stream's backlog and parked messages.
type streamReader interface {
	Depth(ctx context.Context) (stream.Depth, error)
	ParkedCount(ctx context.Context) (uint64, error)
}

// clusterCollector exports the figures of the shared streams: the same for
// every process that reads them. Only the bot registers it (never the
// workers, whose replica count changes with the load), and it reads each
// stream once per scrape. Several bot replicas export the same values:
// aggregate them with max, never sum.
type clusterCollector struct {
	jobs, reports streamReader
	now           func() time.Time
	log           *zap.Logger
}

var (
	queueLagDesc = prometheus.NewDesc("redfix_queue_lag_jobs",
		"Repair jobs waiting for a worker or held by one: the autoscaling signal. Exported by the bot only, the same by every replica: aggregate with max.", nil, nil)
	queueOldestDesc = prometheus.NewDesc("redfix_queue_oldest_job_age_seconds",
		"Age of the oldest repair job not yet settled (0 when none). Exported by the bot only: aggregate with max.", nil, nil)
	backlogDesc = prometheus.NewDesc("redfix_triage_backlog_reports",
		"Reports stored and not yet triaged (waiting or being triaged). Exported by the bot only: aggregate with max.", nil, nil)
	backlogOldestDesc = prometheus.NewDesc("redfix_triage_oldest_report_age_seconds",
		"Age of the oldest report not yet triaged (0 when none): a webhook or ingest backlog. Exported by the bot only: aggregate with max.", nil, nil)
	parkedDesc = prometheus.NewDesc("redfix_parked_messages",
		"Messages parked on the dead-letter stream after their last retry, waiting for `bot replay`, by stream (reports, jobs). Exported by the bot only: aggregate with max.", []string{"stream"}, nil)
	streamUpDesc = prometheus.NewDesc("redfix_stream_up",
		"1 when the stream's figures could be read at this scrape, by stream (reports, jobs).", []string{"stream"}, nil)
)

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueLagDesc, queueOldestDesc, backlogDesc, backlogOldestDesc, parkedDesc, streamUpDesc} {
		ch <- d
	}
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, s := range []struct {
		name      string
		st        streamReader
		lag, aged *prometheus.Desc
	}{{"jobs", c.jobs, queueLagDesc, queueOldestDesc}, {"reports", c.reports, backlogDesc, backlogOldestDesc}} {
		d, err := s.st.Depth(ctx)
		if err != nil {
			c.log.Warn("read stream depth for metrics", zap.String("stream", s.name), zap.Error(err))
			ch <- prometheus.MustNewConstMetric(streamUpDesc, prometheus.GaugeValue, 0, s.name)
			continue
		}
		ch <- prometheus.MustNewConstMetric(streamUpDesc, prometheus.GaugeValue, 1, s.name)
		ch <- prometheus.MustNewConstMetric(s.lag, prometheus.GaugeValue, float64(d.Lag))
		age := 0.0
		if !d.Oldest.IsZero() {
			age = max(0, c.now().Sub(d.Oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(s.aged, prometheus.GaugeValue, age)
	}
	for name, st := range map[string]streamReader{"jobs": c.jobs, "reports": c.reports} {
		n, err := st.ParkedCount(ctx)
		if err != nil {
			c.log.Warn("read parked count for metrics", zap.String("stream", name), zap.Error(err))
			continue
		}
		ch <- prometheus.MustNewConstMetric(parkedDesc, prometheus.GaugeValue, float64(n), name)
	}
}
