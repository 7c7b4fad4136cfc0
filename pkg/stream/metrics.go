package stream

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Figures reads a stream's backlog and parked messages (*Stream).
type Figures interface {
	Depth(ctx context.Context) (Depth, error)
	ParkedCount(ctx context.Context) (uint64, error)
}

// ClusterCollector exports the figures of the two shared streams, the job
// queue and the reports triage consumes: the same for every process that
// reads them. Only the bot registers it (never the workers, whose replica
// count changes with the load), and it reads each stream once per scrape.
// Several bot replicas export the same values: aggregate them with max,
// never sum.
type ClusterCollector struct {
	Jobs, Reports Figures
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	Log *zap.Logger
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

// Describe sends the descriptions of the figures.
func (c *ClusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueLagDesc, queueOldestDesc, backlogDesc, backlogOldestDesc, parkedDesc, streamUpDesc} {
		ch <- d
	}
}

// Collect reads the streams and sends their figures; a stream that cannot
// be read is said down (redfix_stream_up 0) and logged.
func (c *ClusterCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.Now
	if now == nil {
		now = time.Now
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, s := range []struct {
		name      string
		st        Figures
		lag, aged *prometheus.Desc
	}{{"jobs", c.Jobs, queueLagDesc, queueOldestDesc}, {"reports", c.Reports, backlogDesc, backlogOldestDesc}} {
		d, err := s.st.Depth(ctx)
		if err != nil {
			c.Log.Warn("read stream depth for metrics", zap.String("stream", s.name), zap.Error(err))
			ch <- prometheus.MustNewConstMetric(streamUpDesc, prometheus.GaugeValue, 0, s.name)
			continue
		}
		ch <- prometheus.MustNewConstMetric(streamUpDesc, prometheus.GaugeValue, 1, s.name)
		ch <- prometheus.MustNewConstMetric(s.lag, prometheus.GaugeValue, float64(d.Lag))
		age := 0.0
		if !d.Oldest.IsZero() {
			age = max(0, now().Sub(d.Oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(s.aged, prometheus.GaugeValue, age)
	}
	for name, st := range map[string]Figures{"jobs": c.Jobs, "reports": c.Reports} {
		n, err := st.ParkedCount(ctx)
		if err != nil {
			c.Log.Warn("read parked count for metrics", zap.String("stream", name), zap.Error(err))
			continue
		}
		ch <- prometheus.MustNewConstMetric(parkedDesc, prometheus.GaugeValue, float64(n), name)
	}
}
