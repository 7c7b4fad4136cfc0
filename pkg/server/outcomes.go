package server

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/task"
)

// LandRates reads the outcomes of published pull requests.
type LandRates interface {
	LandRate(ctx context.Context) (task.Land, error)
}

// landCollector reads the outcomes from the store at each scrape, so that
// every bot replica reports the same shared numbers.
type landCollector struct {
	land LandRates
	log  *zap.Logger
}

var (
	landDescs = map[string]*prometheus.Desc{
		"published":         prometheus.NewDesc("redfix_fixes_published_total", "Change requests published on their forges, by repository.", []string{"repository"}, nil),
		"landed":            prometheus.NewDesc("redfix_fixes_landed_total", "Published pull requests merged (with or without a human's edits), by repository.", []string{"repository"}, nil),
		"landed_with_edits": prometheus.NewDesc("redfix_fixes_landed_with_edits_total", "Published pull requests merged after a human pushed to their branch, by repository.", []string{"repository"}, nil),
		"closed_unmerged":   prometheus.NewDesc("redfix_fixes_closed_unmerged_total", "Published pull requests closed without merging, by repository.", []string{"repository"}, nil),
		"closed_by_bot":     prometheus.NewDesc("redfix_fixes_closed_by_bot_total", "Published pull requests that redfix closed itself (a person's fix made them unneeded, or they conflict with the default branch), by repository; part of closed unmerged.", []string{"repository"}, nil),
		"reviewed":          prometheus.NewDesc("redfix_fixes_reviewed_total", "Published pull requests that got a review, by repository.", []string{"repository"}, nil),
		"changes_requested": prometheus.NewDesc("redfix_fixes_changes_requested_total", "Published pull requests on which a reviewer requested changes, by repository.", []string{"repository"}, nil),
	}
	landRateDesc    = prometheus.NewDesc("redfix_land_rate_ratio", "Landed ÷ decided (landed or closed unmerged) pull requests, by repository; NaN while none is decided.", []string{"repository"}, nil)
	landOverallDesc = prometheus.NewDesc("redfix_land_rate_overall_ratio", "Landed ÷ decided (landed or closed unmerged) pull requests, all repositories; NaN while none is decided.", nil, nil)
	landUpDesc      = prometheus.NewDesc("redfix_land_rate_up", "1 when the outcomes could be read from the store at this scrape.", nil, nil)
)

func (c *landCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range landDescs {
		ch <- d
	}
	ch <- landRateDesc
	ch <- landOverallDesc
	ch <- landUpDesc
}

func (c *landCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	land, err := c.land.LandRate(ctx)
	if err != nil {
		c.log.Warn("read land rate for metrics", zap.Error(err))
		ch <- prometheus.MustNewConstMetric(landUpDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(landUpDesc, prometheus.GaugeValue, 1)
	for _, r := range land.Repos {
		for name, v := range map[string]int64{
			"published": r.Published, "landed": r.Landed, "landed_with_edits": r.LandedWithEdits,
			"closed_unmerged": r.ClosedUnmerged, "closed_by_bot": r.ClosedByBot, "reviewed": r.Reviewed, "changes_requested": r.ChangesRequested,
		} {
			ch <- prometheus.MustNewConstMetric(landDescs[name], prometheus.CounterValue, float64(v), r.Repo)
		}
		ch <- prometheus.MustNewConstMetric(landRateDesc, prometheus.GaugeValue, gaugeRate(r.LandRate), r.Repo)
	}
	ch <- prometheus.MustNewConstMetric(landOverallDesc, prometheus.GaugeValue, gaugeRate(land.Overall.LandRate))
}

// gaugeRate is a land rate as a gauge's value: NaN while there is none,
// which Prometheus keeps as "no value" (comparisons with it are false).
func gaugeRate(r *float64) float64 {
	if r == nil {
		return math.NaN()
	}
	return *r
}
