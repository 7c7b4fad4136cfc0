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
	"runtime/debug"
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

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/embedded"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/llm/llmtest"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
)

// docMetric is one row of docs/metrics.md's table.
type docMetric struct {
	name, typ string
	labels    []string
	bot       bool
	worker    bool
	// what is the row's last cell: what the metric counts, the values of
	// its labels among it.
	what string
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
		m.what = cells[4]
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
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testReadToken)
	resp, err := http.DefaultClient.Do(req)
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

// openLabels take values from outside redfix's own vocabulary (names,
// addresses, versions, buckets): their values are not listed in the doc.
var openLabels = map[string]bool{"repository": true, "route": true, "method": true, "code": true, "version": true, "revision": true, "goversion": true, "le": true}

// vocabulary is the values mf's series give their bounded labels (the
// results, reasons, gates, classes a process exports, most from its
// start), each once.
func vocabulary(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if v := l.GetValue(); !openLabels[l.GetName()] && v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
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
	// The bot and a worker share NATS and Redis, as in production (an
	// embedded server serves its own process alone).
	rs, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	env := map[string]string{"REDFIX_DATA_DIR": t.TempDir(), "REDFIX_NATS_URL": tcpNATS(t), "REDFIX_NATS_TOKEN": tcpNATSToken,
		"REDFIX_REDIS_ADDR": rs.Addr(), "REDFIX_REDIS_PASSWORD": rs.Password(), "REDFIX_READ_TOKEN": testReadToken}
	cfg, err := config.Load("", func(k string) string { return env[k] })
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
	if _, err := bot.Store.RecordPublished(ctx, task.Fix{Repo: "acme/shop", Number: 7, URL: "https://github.com/acme/shop/pull/7"}); err != nil {
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
	wcfg.DataDir = t.TempDir()
	worker, err := Start(ctx, wcfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	pipe, err := worker.NewPipeline(wcfg)
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
	testsvc.Poll(t, 2*time.Minute, "the worker exports redfix_jobs_total", func() bool {
		workerFams = scrape(t, worker.OpsHandler())
		return workerFams["redfix_jobs_total"] != nil
	})

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
				if mf != nil {
					t.Errorf("%s: the %s exports it; the doc says it does not (a dashboard summing it over the processes would count the bot's figures again, or a worker's zeros)", m.name, p.who)
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
			for _, v := range vocabulary(mf) {
				if !strings.Contains(m.what, "`"+v+"`") {
					t.Errorf("%s: the %s exports the value %q, which the doc does not name", m.name, p.who, v)
				}
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

// startSystem starts an embedded system with cfg's data directory in the
// test's temporary directory.
func startSystem(t *testing.T, env map[string]string) (*System, config.Config) {
	t.Helper()
	clearEnv(t)
	env["REDFIX_DATA_DIR"] = t.TempDir()
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sys, err := Start(ctx, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Close)
	return sys, cfg
}

// The model's failed calls are counted by class where they are made: each
// attempt of the pipeline's client, a retried 429 and the 401 that ends
// the call.
func TestModelErrorsCountedByClass(t *testing.T) {
	srv := llmtest.NewServer(t,
		llmtest.Reply{Status: 429, Body: `{"error":{"message":"slow down","type":"rate_limit_error"}}`},
		llmtest.Reply{Status: 401, Body: `{"error":{"message":"invalid api key"}}`},
	)
	sys, cfg := startSystem(t, map[string]string{"REDFIX_MODEL": "m", "REDFIX_LLM_BASE_URL": srv.URL, "REDFIX_LLM_MAX_RETRIES": "1"})
	pipe, err := sys.NewPipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The judge's call: any of the pipeline's model calls goes through the
	// same client.
	_, _ = pipe.Judge.Judge(ctx, judge.Input{Task: task.Task{ID: "t1", Repo: "/srv/repo"}, Patch: "--- a/x.go\n+++ b/x.go\n"})
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d model requests, want the 429 and the 401", n)
	}
	for class, want := range map[string]float64{llm.ErrorRateLimit: 1, llm.ErrorAuth: 1, llm.ErrorServer: 0} {
		if got := testutil.ToFloat64(sys.modelErrors.WithLabelValues(class)); got != want {
			t.Errorf("redfix_model_errors_total{class=%q} = %v, want %v", class, got, want)
		}
	}
}

// redfix_sandbox_confined says whether the commands run for repositories
// are confined, with the configured mode.
func TestSandboxConfinedGauge(t *testing.T) {
	sys, _ := startSystem(t, map[string]string{"REDFIX_SANDBOX": "auto"})
	want := func(v int) string {
		return fmt.Sprintf("# HELP redfix_sandbox_confined 1 when the commands run for repositories (tests, builds) are confined by the sandbox, 0 when they run unconfined; mode is the configured sandbox.mode (auto, required, off).\n# TYPE redfix_sandbox_confined gauge\nredfix_sandbox_confined{mode=\"auto\"} %d\n", v)
	}
	if err := testutil.GatherAndCompare(sys.Registry, strings.NewReader(want(0)), "redfix_sandbox_confined"); err != nil {
		t.Errorf("before the sandbox is known: %v", err)
	}
	sys.SetSandbox(sandbox.Status{Confined: true, How: "bubblewrap, user namespace"})
	if err := testutil.GatherAndCompare(sys.Registry, strings.NewReader(want(1)), "redfix_sandbox_confined"); err != nil {
		t.Errorf("confined: %v", err)
	}
	sys.SetSandbox(sandbox.Status{How: "none", Reason: "no bwrap"})
	if err := testutil.GatherAndCompare(sys.Registry, strings.NewReader(want(0)), "redfix_sandbox_confined"); err != nil {
		t.Errorf("unconfined: %v", err)
	}
}

// Without link-time values the labels come from what the toolchain
// stamped: the revision of the checkout, marked dirty when it had changes;
// link-time values win; nothing known is "unknown".
func TestBuildLabels(t *testing.T) {
	stamped := func(settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/redfix/redfix", Version: "(devel)"}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const sha = "4f1c2a9e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a"
	cases := []struct {
		name                     string
		bi                       *debug.BuildInfo
		linkVersion, linkRev     string
		version, revision, goVer string
	}{
		{"clean checkout", stamped("vcs", "git", "vcs.revision", sha, "vcs.modified", "false"), "", "", "(devel)", sha, "go1.26.8"},
		{"checkout with changes", stamped("vcs.revision", sha, "vcs.modified", "true"), "", "", "(devel)", sha + "-dirty", "go1.26.8"},
		{"-buildvcs=false", stamped("-trimpath", "true"), "", "", "(devel)", "unknown", "go1.26.8"},
		{"link time wins", stamped("vcs.revision", sha, "vcs.modified", "true"), "v1.2.3", "0123abcd", "v1.2.3", "0123abcd", "go1.26.8"},
		{"link-time revision only", stamped(), "", "0123abcd", "(devel)", "0123abcd", "go1.26.8"},
		{"no build information", nil, "", "", "unknown", "unknown", "unknown"},
	}
	for _, c := range cases {
		v, r, g := buildLabels(c.bi, c.linkVersion, c.linkRev)
		if v != c.version || r != c.revision || g != c.goVer {
			t.Errorf("%s: (%q, %q, %q), want (%q, %q, %q)", c.name, v, r, g, c.version, c.revision, c.goVer)
		}
	}
}
