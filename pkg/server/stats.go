package server

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/task"
)

// History reads the time series the store keeps for the dashboard.
type History interface {
	Daily(ctx context.Context, from, to time.Time) ([]series.DayCounts, error)
	TimesToPR(ctx context.Context, from, to time.Time) ([]float64, error)
	RecentPullRequests(ctx context.Context, n int) ([]series.PullRequest, error)
	RecentTriageFailures(ctx context.Context, n int) ([]series.TriageFailure, error)
}

// Counter counts events for the history.
type Counter interface {
	Count(ctx context.Context, at time.Time, counts ...series.Count) error
}

// Backlog reads a stream's depth.
type Backlog interface {
	Depth(ctx context.Context) (stream.Depth, error)
}

// The history's windows: days for the daily view, weeks for the weekly one.
const (
	historyDays  = 30
	historyWeeks = 12
)

// Period is what happened in one day or week (UTC; a week starts on
// Monday).
type Period struct {
	Start     string `json:"start"` // YYYY-MM-DD
	Published int64  `json:"published"`
	NoPatch   int64  `json:"no_patch"`
	Failed    int64  `json:"failed"`
	Reviewed  int64  `json:"reviewed"`
	Landed    int64  `json:"landed"`
	Closed    int64  `json:"closed_unmerged"`
	// PublishRate is published ÷ (published + no_patch + failed) of the
	// repairs settled in the period; LandRate is landed ÷ (landed + closed
	// unmerged) of the pull requests decided in it. Nil when there is
	// nothing to divide by.
	PublishRate *float64 `json:"publish_rate"`
	LandRate    *float64 `json:"land_rate"`
}

func (p *Period) add(c series.Count) {
	switch c.Event {
	case series.EventPublished:
		p.Published += c.N
	case series.EventNoPatch:
		p.NoPatch += c.N
	case series.EventFailed:
		p.Failed += c.N
	case series.EventReviewed:
		p.Reviewed += c.N
	case series.EventLanded:
		p.Landed += c.N
	case series.EventClosed:
		p.Closed += c.N
	}
}

func ratio(n, d int64) *float64 {
	if d == 0 {
		return nil
	}
	r := float64(n) / float64(d)
	return &r
}

func (p *Period) finish() {
	p.PublishRate = ratio(p.Published, p.Published+p.NoPatch+p.Failed)
	p.LandRate = ratio(p.Landed, p.Landed+p.Closed)
}

// Series are the days and weeks of one repository, or of all.
type Series struct {
	Repo   string   `json:"repo,omitempty"`
	Daily  []Period `json:"daily"`
	Weekly []Period `json:"weekly"`
	// Last30 sums the last 30 days.
	Last30 Period `json:"last_30_days"`
}

// Window sums the counters of the last 30 days.
type Window struct {
	Days            int              `json:"days"`
	ReportsAccepted int64            `json:"reports_accepted"`
	ReportsRejected int64            `json:"reports_rejected"`
	ReportsTriaged  int64            `json:"reports_triaged"`
	TriageFailed    map[string]int64 `json:"triage_failed"` // by class: invalid, gave_up
	Queued          int64            `json:"queued"`
	Dropped         map[string]int64 `json:"dropped"`         // by reason class
	GateRejections  map[string]int64 `json:"gate_rejections"` // rounds rejected, by gate
	Repairs         int64            `json:"repairs"`
	Tokens          int64            `json:"tokens"`
	CostUSD         float64          `json:"cost_usd"`
	TokensPerRepair float64          `json:"tokens_per_repair"`
	CostPerRepair   float64          `json:"cost_usd_per_repair"`
}

// Latency is the time from red CI (the arrival of the report that made the
// task; its creation by triage when that was not recorded) to its pull
// request, over the last 30 days.
type Latency struct {
	Samples    int     `json:"samples"`
	P50Seconds float64 `json:"p50_seconds"`
	P90Seconds float64 `json:"p90_seconds"`
}

// QueueDepth is a stream's backlog now.
type QueueDepth struct {
	Depth            uint64  `json:"depth"`
	OldestAgeSeconds float64 `json:"oldest_age_seconds"`
}

// PullRequestRow is a recent pull request with where it stands.
type PullRequestRow struct {
	series.PullRequest
	// State is open, landed, landed_with_edits or closed_unmerged for a
	// pull request on GitHub; "published" for one whose outcome is not
	// followed (the local publisher's).
	State string `json:"state"`
	// Link is the pull request's address when it is a web address.
	Link string `json:"link,omitempty"`
}

// Stats is GET /api/v1/stats, and what the dashboard draws.
type Stats struct {
	Tasks map[task.Status]int64 `json:"tasks"`
	// PublishRate is published ÷ (published + no_patch + failed), all
	// time: a publishing failure is a failed task. Nil (null) while no
	// task has settled: there is nothing to divide by.
	PublishRate *float64 `json:"publish_rate"`
	// Land is absent when outcomes are not tracked.
	Land           *task.Land             `json:"land,omitempty"`
	Window         *Window                `json:"window,omitempty"`
	Overall        *Series                `json:"history,omitempty"`
	Repos          []Series               `json:"history_by_repo,omitempty"`
	TimeToPR       *Latency               `json:"time_to_pull_request,omitempty"`
	Jobs           *QueueDepth            `json:"jobs,omitempty"`
	Reports        *QueueDepth            `json:"reports,omitempty"`
	PullRequests   []PullRequestRow       `json:"recent_pull_requests,omitempty"`
	TriageFailures []series.TriageFailure `json:"recent_triage_failures,omitempty"`
	// Unavailable names what could not be read (the store or a stream
	// down): the rest is still given.
	Unavailable []string `json:"unavailable,omitempty"`

	storeDown bool
}

// DefaultReadTimeout is how long the dashboard and /api/v1/stats wait for
// each of their sources (Options.ReadTimeout).
const DefaultReadTimeout = 5 * time.Second

// The sources the dashboard reads, as its banner names them.
const (
	sourceStore   = "the store (Redis: tasks, outcomes, history)"
	sourceJobs    = "the job queue (NATS)"
	sourceReports = "the report backlog (NATS)"
)

func (s *Server) readTimeout() time.Duration {
	if s.opts.ReadTimeout > 0 {
		return s.opts.ReadTimeout
	}
	return DefaultReadTimeout
}

// collect reads every figure it can; what it cannot is named in
// Unavailable, never an error. Each source (the store, the job queue, the
// report backlog) is read at once and with a deadline of its own, so that
// one that does not answer (NATS down) costs no other its figures.
func (s *Server) collect(ctx context.Context, now time.Time) Stats {
	var (
		st Stats
		mu sync.Mutex
		wg sync.WaitGroup
	)
	fail := func(what string, err error) {
		s.log.Warn("read for the dashboard", zap.String("what", what), zap.Error(err))
		mu.Lock()
		st.Unavailable = append(st.Unavailable, what)
		mu.Unlock()
	}
	for _, q := range []struct {
		name string
		b    Backlog
		dst  **QueueDepth
	}{{sourceJobs, s.opts.Jobs, &st.Jobs}, {sourceReports, s.opts.Reports, &st.Reports}} {
		if q.b == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			qctx, cancel := context.WithTimeout(ctx, s.readTimeout())
			defer cancel()
			d, err := q.b.Depth(qctx)
			if err != nil {
				fail(q.name, err)
				return
			}
			qd := &QueueDepth{Depth: d.Lag}
			if !d.Oldest.IsZero() {
				qd.OldestAgeSeconds = math.Max(0, now.Sub(d.Oldest).Seconds())
			}
			*q.dst = qd
		}()
	}
	sctx, cancel := context.WithTimeout(ctx, s.readTimeout())
	defer cancel()
	s.collectStore(sctx, now, &st, fail)
	wg.Wait()
	slices.Sort(st.Unavailable)
	return st
}

// collectStore reads the store's figures into st: the task counts, the land
// rate and the history.
func (s *Server) collectStore(ctx context.Context, now time.Time, st *Stats, fail func(string, error)) {
	counts, err := s.tasks.CountByStatus(ctx)
	if err != nil {
		// The store does not answer: its other reads would wait for it in
		// turn. Say so once and give what does not come from it.
		fail(sourceStore, err)
		st.storeDown = true
		return
	}
	st.Tasks, st.PublishRate = counts, publishRate(counts)
	if s.land != nil {
		if land, err := s.land.LandRate(ctx); err != nil {
			fail("land rate", err)
		} else {
			st.Land = &land
		}
	}
	h := s.opts.History
	if h == nil {
		return
	}
	weekStart := mondayOf(now).AddDate(0, 0, -7*(historyWeeks-1))
	from := weekStart
	if d := dayOf(now).AddDate(0, 0, -(historyDays - 1)); d.Before(from) {
		from = d
	}
	if days, err := h.Daily(ctx, from, now); err != nil {
		fail("history", err)
	} else {
		st.Window, st.Overall, st.Repos = fold(days, now)
	}
	if samples, err := h.TimesToPR(ctx, dayOf(now).AddDate(0, 0, -(historyDays-1)), now); err != nil {
		fail("times to pull request", err)
	} else {
		st.TimeToPR = &Latency{Samples: len(samples), P50Seconds: percentile(samples, 0.5), P90Seconds: percentile(samples, 0.9)}
	}
	if prs, err := h.RecentPullRequests(ctx, 20); err != nil {
		fail("recent pull requests", err)
	} else {
		for _, pr := range prs {
			row := PullRequestRow{PullRequest: pr, State: "published"}
			if isWebURL(pr.URL) {
				row.Link = pr.URL
			}
			if s.opts.PullRequestState != nil {
				if state, ok := s.opts.PullRequestState(ctx, pr.URL); ok {
					row.State = state
				}
			}
			st.PullRequests = append(st.PullRequests, row)
		}
	}
	if fs, err := h.RecentTriageFailures(ctx, 20); err != nil {
		fail("recent triage failures", err)
	} else {
		st.TriageFailures = fs
	}
}

func dayOf(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

func mondayOf(t time.Time) time.Time {
	d := dayOf(t)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// fold folds the daily counters into the 30-day window and the daily
// and weekly series, overall and by repository.
func fold(days []series.DayCounts, now time.Time) (*Window, *Series, []Series) {
	w := &Window{Days: historyDays, TriageFailed: map[string]int64{}, Dropped: map[string]int64{}, GateRejections: map[string]int64{}}
	firstDay := dayOf(now).AddDate(0, 0, -(historyDays - 1)).Format(time.DateOnly)
	firstWeek := mondayOf(now).AddDate(0, 0, -7*(historyWeeks-1))
	overall := newSeries("", now, firstWeek)
	byRepo := map[string]*Series{}
	var costMicro int64
	for _, d := range days {
		t, err := time.Parse(time.DateOnly, d.Day)
		if err != nil {
			continue
		}
		inWindow := d.Day >= firstDay
		week := int(t.Sub(firstWeek).Hours() / (24 * 7))
		for _, c := range d.Counts {
			if inWindow {
				switch c.Event {
				case series.EventReportAccepted:
					w.ReportsAccepted += c.N
				case series.EventReportRejected:
					w.ReportsRejected += c.N
				case series.EventReportTriaged:
					w.ReportsTriaged += c.N
				case series.EventTriageFailed:
					w.TriageFailed[c.Class] += c.N
				case series.EventQueued:
					w.Queued += c.N
				case series.EventDropped:
					w.Dropped[c.Class] += c.N
				case series.EventGateRejected:
					w.GateRejections[c.Class] += c.N
				case series.EventRepaired:
					w.Repairs += c.N
				case series.EventTokens:
					w.Tokens += c.N
				case series.EventCostMicroUSD:
					costMicro += c.N
				}
			}
			if !countsForSeries(c.Event) {
				continue
			}
			rs := byRepo[c.Repo]
			if rs == nil {
				rs = newSeries(c.Repo, now, firstWeek)
				byRepo[c.Repo] = rs
			}
			for _, s := range []*Series{overall, rs} {
				if inWindow {
					s.Daily[int(t.Sub(dayOf(now).AddDate(0, 0, -(historyDays-1))).Hours()/24)].add(c)
					s.Last30.add(c)
				}
				if week >= 0 && week < historyWeeks {
					s.Weekly[week].add(c)
				}
			}
		}
	}
	w.CostUSD = float64(costMicro) / 1e6
	if w.Repairs > 0 {
		w.TokensPerRepair = float64(w.Tokens) / float64(w.Repairs)
		w.CostPerRepair = w.CostUSD / float64(w.Repairs)
	}
	var repos []Series
	for _, s := range append([]*Series{overall}, sortedSeries(byRepo)...) {
		for i := range s.Daily {
			s.Daily[i].finish()
		}
		for i := range s.Weekly {
			s.Weekly[i].finish()
		}
		s.Last30.finish()
		if s != overall {
			repos = append(repos, *s)
		}
	}
	return w, overall, repos
}

func countsForSeries(event string) bool {
	switch event {
	case series.EventPublished, series.EventNoPatch, series.EventFailed, series.EventReviewed, series.EventLanded, series.EventClosed:
		return true
	}
	return false
}

func newSeries(repo string, now, firstWeek time.Time) *Series {
	s := &Series{Repo: repo, Daily: make([]Period, historyDays), Weekly: make([]Period, historyWeeks)}
	first := dayOf(now).AddDate(0, 0, -(historyDays - 1))
	for i := range s.Daily {
		s.Daily[i].Start = first.AddDate(0, 0, i).Format(time.DateOnly)
	}
	for i := range s.Weekly {
		s.Weekly[i].Start = firstWeek.AddDate(0, 0, 7*i).Format(time.DateOnly)
	}
	s.Last30.Start = first.Format(time.DateOnly)
	return s
}

func sortedSeries(m map[string]*Series) []*Series {
	out := make([]*Series, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Repo < out[j].Repo })
	return out
}

// percentile is the nearest-rank percentile of the samples (0 for none).
func percentile(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.collect(r.Context(), time.Now()))
	return nil
}

func publishRate(counts map[task.Status]int64) *float64 {
	return ratio(counts[task.StatusPublished], counts[task.StatusPublished]+counts[task.StatusNoPatch]+counts[task.StatusFailed])
}

// isWebURL reports whether u is an http(s) address, to link to.
func isWebURL(u string) bool {
	pu, err := url.Parse(u)
	return err == nil && (pu.Scheme == "https" || pu.Scheme == "http") && pu.Host != ""
}
