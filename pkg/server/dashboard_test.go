package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded"
	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/stream"
)

type fixedDepth stream.Depth

func (d fixedDepth) Depth(context.Context) (stream.Depth, error) { return stream.Depth(d), nil }

// A dashboard over a store with history: rates, counts, reasons, gates,
// model use, time to pull request, recent pull requests; then the same
// dashboard with the store down: a banner, never a 500.
func TestDashboardHistoryAndStoreDown(t *testing.T) {
	ctx := context.Background()
	r, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), Password: r.Password(), MaxRetries: -1})
	defer rdb.Close()
	st := store.New(rdb, "dash-test")
	now := time.Now()
	shop, local := "https://github.com/acme/shop", "/srv/demo"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Count(ctx, now,
		series.Count{Event: series.EventReportAccepted, Repo: shop, N: 4},
		series.Count{Event: series.EventReportRejected, N: 1},
		series.Count{Event: series.EventReportTriaged, Repo: shop, N: 3},
		series.Count{Event: series.EventTriageFailed, Class: "invalid", Repo: shop},
		series.Count{Event: series.EventQueued, Repo: shop, N: 3},
		series.Count{Event: series.EventDropped, Class: "flaky", Repo: shop, N: 3},
		series.Count{Event: series.EventDropped, Class: "duplicate", Repo: shop},
		series.Count{Event: series.EventPublished, Repo: shop, N: 2},
		series.Count{Event: series.EventPublished, Repo: local},
		series.Count{Event: series.EventNoPatch, Repo: shop},
		series.Count{Event: series.EventGateRejected, Class: "oracle", Repo: shop},
		series.Count{Event: series.EventRepaired, Repo: shop, N: 4},
		series.Count{Event: series.EventTokens, Repo: shop, N: 4000},
		series.Count{Event: series.EventCostMicroUSD, Repo: shop, N: 80000},
	))
	// Last week: one landed, one closed.
	must(st.Count(ctx, now.AddDate(0, 0, -7), series.Count{Event: series.EventLanded, Repo: "acme/shop"}, series.Count{Event: series.EventClosed, Repo: "acme/shop"}))
	for _, d := range []time.Duration{time.Minute, 2 * time.Minute, 10 * time.Minute} {
		must(st.RecordTimeToPR(ctx, now, d))
	}
	must(st.RecordPullRequest(ctx, series.PullRequest{TaskID: "t1", Repo: "acme/shop", URL: "https://github.com/acme/shop/pull/9", Title: "TestTier", At: now}))
	must(st.RecordPullRequest(ctx, series.PullRequest{TaskID: "t2", Repo: local, URL: "/tmp/out/redfix-t2", Title: "TestLocal", At: now, Unreviewed: true}))
	must(st.RecordTriageFailure(ctx, series.TriageFailure{Submission: "s9", Class: "invalid", Reason: "bad <script>alert(1)</script> report", At: now}))

	opts := Options{
		ReadOpen: true,
		Land:     st, History: st, Events: st,
		Jobs: fixedDepth{Lag: 2, Oldest: now.Add(-90 * time.Second)}, Reports: fixedDepth{},
		PullRequestState: func(_ context.Context, url string) (string, bool) {
			return "landed", strings.Contains(url, "github.com")
		},
	}
	srv := httptest.NewServer(New(&recordingIntake{}, st, prometheus.NewRegistry(), opts, zaptest.NewLogger(t)).Handler())
	defer srv.Close()

	code, page := get(t, srv.URL+"/")
	if code != 200 {
		t.Fatalf("dashboard: %d %s", code, page)
	}
	for _, want := range []string{
		`id="land-rate">50.0%`, `1 landed of 2 decided, last 30 days (3 published)`, // no outcome on GitHub: the history's
		`<svg class="chart" data-chart="daily"`, `<svg class="chart" data-chart="weekly"`, `data-chart="weekly acme/shop"`, `data-chart="weekly /srv/demo"`,
		`class="publish-rate"`, `class="land-rate"`,
		`id="time-to-pr">2m0s`, `p90 10m0s; over 3 in 30 days`,
		`id="queue-depth">2`, `oldest job 1m30s old`,
		`<td>flaky</td><td class="n">3</td>`, `<td>duplicate</td><td class="n">1</td>`, `<td>oracle</td><td class="n">1</td>`,
		`<td>invalid</td><td class="n">1</td>`,
		`<td>tokens per repair</td><td class="n">1000</td>`, `<td>cost per repair</td><td class="n">$0.0200</td>`,
		`<a href="https://github.com/acme/shop/pull/9">`, `<td class="landed">landed</td>`, // reviewed: no mark
		`<td class="published">published <span class="unreviewed" title="no model reviewed this patch">unreviewed</span></td>`,
		`bad &lt;script&gt;alert(1)&lt;/script&gt; report`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "store-unavailable") {
		t.Errorf("unescaped script or a banner with the store up")
	}
	var stats Stats
	_, body := get(t, srv.URL+"/api/v1/stats")
	if err := json.Unmarshal([]byte(body), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Window == nil || stats.Window.ReportsAccepted != 4 || stats.Window.Dropped["flaky"] != 3 || stats.Window.GateRejections["oracle"] != 1 ||
		stats.TimeToPR == nil || stats.TimeToPR.P50Seconds != 120 || stats.TimeToPR.P90Seconds != 600 ||
		stats.Overall == nil || stats.Overall.Last30.Published != 3 || len(stats.Repos) != 2 || len(stats.PullRequests) != 2 || stats.Jobs.Depth != 2 {
		t.Fatalf("stats: %s", body)
	}
	var week Period // the week of the landing: one landed of two decided
	for _, p := range stats.Overall.Weekly {
		if p.Landed > 0 {
			week = p
		}
	}
	if week.LandRate == nil || *week.LandRate != 0.5 {
		t.Errorf("land rate of the week with one landed, one closed: %+v", week)
	}

	r.Close() // the store goes down
	code, page = get(t, srv.URL+"/")
	if code != 200 || !strings.Contains(page, `id="store-unavailable"`) || !strings.Contains(page, "the store") {
		t.Fatalf("dashboard with the store down: %d %s", code, page)
	}
	if !strings.Contains(page, `id="queue-depth">2`) {
		t.Errorf("the queue's depth is not from the store: it should still show")
	}
	code, body = get(t, srv.URL+"/api/v1/stats")
	if code != 200 || !strings.Contains(body, `"unavailable"`) {
		t.Fatalf("stats with the store down: %d %s", code, body)
	}
}
