package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/store"
)

// docMetric is one row of docs/metrics.md's table.
type docMetric struct {
	name, typ string
	labels    []string
	bot       bool
	worker    bool
}

func readMetricsDoc(t *testing.T) []docMetric {
	t.Helper()
	b, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([^`]+)`")
	var out []docMetric
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `redfix_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 5 {
			t.Fatalf("metrics doc row with %d cells: %q", len(cells), line)
		}
		m := docMetric{name: strings.Trim(strings.TrimSpace(cells[0]), "`"), typ: strings.TrimSpace(cells[1])}
		for _, l := range tick.FindAllStringSubmatch(cells[2], -1) {
			m.labels = append(m.labels, l[1])
		}
		slices.Sort(m.labels)
		m.bot = strings.Contains(cells[3], "bot")
		m.worker = strings.Contains(cells[3], "worker")
		out = append(out, m)
	}
	if len(out) < 20 {
		t.Fatalf("docs/metrics.md lists %d metrics; the table did not parse", len(out))
	}
	return out
}

func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func labelsOf(mf *dto.MetricFamily) []string {
	var ls []string
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if !slices.Contains(ls, l.GetName()) {
				ls = append(ls, l.GetName())
			}
		}
	}
	slices.Sort(ls)
	return ls
}

// Every metric docs/metrics.md lists is served, with its type and labels,
// by the process it names (and the bot's cluster metrics by no worker); and
// every redfix_ metric served is listed.
func TestMetricsDocMatchesScrape(t *testing.T) {
	clearEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := config.Load("", func(k string) string { return map[string]string{"REDFIX_DATA_DIR": t.TempDir()}[k] })
	if err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	bot, err := Start(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	// A published fix on GitHub: the outcome series exist per repository.
	if _, err := bot.Store.RecordPublished(ctx, store.Fix{Repo: "acme/shop", Number: 7, URL: "https://github.com/acme/shop/pull/7"}); err != nil {
		t.Fatal(err)
	}
	if _, err := bot.Intake.Submit(ctx, ingest.Submission{ID: "r1", Repo: "/srv/repo", Commit: "abc123", Report: []byte(`{"Action":"pass","Package":"p"}`)}); err != nil {
		t.Fatal(err)
	}
	botH := bot.Handler(cfg)
	// A request, so that the HTTP histogram has a series.
	rec := httptest.NewRecorder()
	botH.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))

	// A worker, on the bot's NATS and Redis, as in production.
	wcfg := cfg
	wcfg.NATS.URL, wcfg.Redis.Addr, wcfg.DataDir = bot.NATSURL, bot.RedisAddr, t.TempDir()
	worker, err := Start(ctx, wcfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	pipe, err := NewPipelineWith(wcfg, worker.Store, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- worker.RunWorker(wctx, wcfg, pipe) }()
	defer func() { stopWorker(); <-done }()

	doc := readMetricsDoc(t)
	botFams := scrape(t, botH)
	var workerFams map[string]*dto.MetricFamily
	deadline := time.Now().Add(2 * time.Minute)
	for {
		workerFams = scrape(t, worker.OpsHandler())
		if workerFams["redfix_jobs_total"] != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	listed := map[string]bool{}
	for _, m := range doc {
		listed[m.name] = true
		for _, p := range []struct {
			who     string
			exports bool
			fams    map[string]*dto.MetricFamily
		}{{"bot", m.bot, botFams}, {"worker", m.worker, workerFams}} {
			mf := p.fams[m.name]
			if !p.exports {
				if mf != nil && strings.Contains(m.typ, "gauge") {
					t.Errorf("%s: the %s exports it; the doc says it does not (a gauge there would double-count)", m.name, p.who)
				}
				continue
			}
			if mf == nil {
				t.Errorf("%s: listed for the %s, absent from its /metrics", m.name, p.who)
				continue
			}
			if got := strings.ToLower(mf.GetType().String()); got != m.typ {
				t.Errorf("%s: type %s, the doc says %s", m.name, got, m.typ)
			}
			if got := labelsOf(mf); !slices.Equal(got, m.labels) {
				t.Errorf("%s: labels %v, the doc says %v", m.name, got, m.labels)
			}
		}
	}
	for _, fams := range []map[string]*dto.MetricFamily{botFams, workerFams} {
		for name := range fams {
			if strings.HasPrefix(name, "redfix_") && !listed[name] {
				t.Errorf("%s is served but not listed in docs/metrics.md", name)
			}
		}
	}
}

// redfix_build_info names the Go version and, set at link time, the
// revision and version.
func TestBuildInfoLabels(t *testing.T) {
	defer func(v, r string) { buildVersion, buildRevision = v, r }(buildVersion, buildRevision)
	buildVersion, buildRevision = "v1.2.3", "0123abcd"
	reg := prometheus.NewRegistry()
	registerBuildInfo(reg)
	want := fmt.Sprintf(`
# HELP redfix_build_info Always 1; the labels name the build: module version, VCS revision and Go version.
# TYPE redfix_build_info gauge
redfix_build_info{goversion=%q,revision="0123abcd",version="v1.2.3"} 1
`, runtime.Version())
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "redfix_build_info"); err != nil {
		t.Error(err)
	}
}
