package server

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

func TestLandRate(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "land-test")
	t0 := time.Now().Add(-2 * time.Hour)
	for _, f := range []task.Fix{{Repo: "acme/api", Number: 1}, {Repo: "acme/api", Number: 2}, {Repo: "acme/web", Number: 5}} {
		f.PublishedAt = t0
		if _, err := st.RecordPublished(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RecordReview(ctx, "acme/api", 1, "approved", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordClosed(ctx, "acme/api", 1, true, false, t0.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordClosed(ctx, "acme/web", 5, false, false, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(New(&recordingIntake{}, memTasks{}, reg, Options{Land: st, ReadOpen: true}, zaptest.NewLogger(t)).Handler())
	defer srv.Close()

	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	var stats Stats
	if err := json.Unmarshal([]byte(get("/api/v1/stats")), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Land == nil || stats.Land.Overall.Published != 3 || stats.Land.Overall.Landed != 1 || len(stats.Land.Repos) != 2 {
		t.Fatalf("stats: %+v", stats.Land)
	}
	// acme/api: one landed, one still open: 1 of 1 decided.
	if r := stats.Land.Repos[0]; r.Repo != "acme/api" || r.LandRate == nil || *r.LandRate != 1 || r.MeanSecondsToFirstReview != 3600 {
		t.Errorf("acme/api: %+v", r)
	}

	expected := `
# HELP redfix_land_rate_ratio Landed ÷ decided (landed or closed unmerged) pull requests, by repository; NaN while none is decided.
# TYPE redfix_land_rate_ratio gauge
redfix_land_rate_ratio{repository="acme/api"} 1
redfix_land_rate_ratio{repository="acme/web"} 0
# HELP redfix_fixes_published_total Change requests published on their forges, by repository.
# TYPE redfix_fixes_published_total counter
redfix_fixes_published_total{repository="acme/api"} 2
redfix_fixes_published_total{repository="acme/web"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(expected), "redfix_land_rate_ratio", "redfix_fixes_published_total"); err != nil {
		t.Error(err)
	}
	if v := testutil.ToFloat64(landGauge(t, reg)); v != 0.5 {
		t.Errorf("overall land rate %v, want 1 landed of 2 decided", v)
	}

	page := get("/")
	for _, want := range []string{`id="land-rate">50.0%`, "1 landed of 2 decided on the forges, all time (3 published, 1 open)",
		"50.0% of the decided pull requests landed (1 of 2", "acme/api", `<td class="n">100.0%</td>`, "Mean time to land 1h30m0s"} {
		if !strings.Contains(page, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
}

// With pull requests published and none decided there is no land rate
// yet: "—" on the page, null in /api/v1/stats, NaN in /metrics; never 0%.
func TestLandRateBeforeAnyDecision(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "land-undecided")
	for _, f := range []task.Fix{{Repo: "acme/api", Number: 1}, {Repo: "acme/web", Number: 5}} {
		f.PublishedAt = time.Now().Add(-time.Hour)
		if _, err := st.RecordPublished(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(New(&recordingIntake{}, memTasks{}, reg, Options{Land: st, ReadOpen: true}, zaptest.NewLogger(t)).Handler())
	defer srv.Close()

	_, body := get(t, srv.URL+"/api/v1/stats")
	var raw struct {
		Land struct {
			Overall map[string]any   `json:"overall"`
			Repos   []map[string]any `json:"repos"`
		} `json:"land"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	if v, ok := raw.Land.Overall["land_rate"]; !ok || v != nil || raw.Land.Overall["published"] != float64(2) {
		t.Errorf("overall: %v, want 2 published and land_rate null", raw.Land.Overall)
	}
	for _, r := range raw.Land.Repos {
		if v, ok := r["land_rate"]; !ok || v != nil {
			t.Errorf("repository %v: want land_rate null", r)
		}
	}

	_, page := get(t, srv.URL+"/")
	for _, want := range []string{`id="land-rate">—`, "0 landed of 0 decided on the forges, all time (2 published, 2 open)",
		"no pull request decided yet, so no land rate"} {
		if !strings.Contains(page, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	for _, wrong := range []string{`id="land-rate">0.0%`, `<td class="n">0.0%</td>`, "landed (0 of"} {
		if strings.Contains(page, wrong) {
			t.Errorf("the dashboard shows a land rate of 0 with nothing decided: %q", wrong)
		}
	}
	if v := testutil.ToFloat64(landGauge(t, reg)); !math.IsNaN(v) {
		t.Errorf("overall land rate gauge %v, want NaN (no value)", v)
	}
}

// landGauge is the overall land rate as gathered from reg.
func landGauge(t *testing.T, reg *prometheus.Registry) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "redfix_land_rate_overall_ratio" {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "x"}, func() float64 { return mf.Metric[0].GetGauge().GetValue() })
		}
	}
	t.Fatal("no redfix_land_rate_overall_ratio")
	return nil
}
