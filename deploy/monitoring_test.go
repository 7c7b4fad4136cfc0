package deploy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"
)

// metricDoc is docs/metrics.md's table: each metric's type and labels. The
// table itself is checked against a live bot's and worker's /metrics by
// pkg/app's TestMetricsDocMatchesScrape, so a name found here is served.
type metricDoc map[string]struct {
	typ    string
	labels map[string]bool
}

func readMetricDoc(t *testing.T) metricDoc {
	t.Helper()
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([^`]+)`")
	doc := metricDoc{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `redfix_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 3 {
			t.Fatalf("metrics doc row: %q", line)
		}
		e := doc[strings.Trim(strings.TrimSpace(cells[0]), "`")]
		e.typ, e.labels = strings.TrimSpace(cells[1]), map[string]bool{}
		for _, l := range tick.FindAllStringSubmatch(cells[2], -1) {
			e.labels[l[1]] = true
		}
		doc[strings.Trim(strings.TrimSpace(cells[0]), "`")] = e
	}
	if len(doc) < 20 {
		t.Fatalf("docs/metrics.md: %d metrics parsed", len(doc))
	}
	return doc
}

// promqlKeywords are the words of PromQL that are not metric names.
var promqlKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	// Aggregations, which may take "by (...)" before their argument.
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
}

// selectors returns the metric names and the label names an expression
// uses. It skips strings, durations in brackets and function names, and
// reads label names from matchers and from by/without/on/ignoring lists.
func selectors(expr string) (metrics, labels []string, err error) {
	isStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isPart := func(c byte) bool { return isStart(c) || c >= '0' && c <= '9' }
	skipSpace := func(i int) int {
		for i < len(expr) && (expr[i] == ' ' || expr[i] == '\n' || expr[i] == '\t') {
			i++
		}
		return i
	}
	labelList := false // the next "(...)" lists label names
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(expr) {
				return nil, nil, fmt.Errorf("unterminated string at %d", i)
			}
			i = j + 1
		case c == '[':
			j := strings.IndexByte(expr[i:], ']')
			if j < 0 {
				return nil, nil, fmt.Errorf("unterminated [ at %d", i)
			}
			i += j + 1
		case c == '{':
			// Matchers: label op "value", ...
			j := i + 1
			for {
				j = skipSpace(j)
				if j >= len(expr) {
					return nil, nil, fmt.Errorf("unterminated { at %d", i)
				}
				if expr[j] == '}' {
					break
				}
				k := j
				for k < len(expr) && isPart(expr[k]) {
					k++
				}
				if k == j {
					return nil, nil, fmt.Errorf("bad matcher at %d", j)
				}
				labels = append(labels, expr[j:k])
				k = skipSpace(k)
				for k < len(expr) && strings.IndexByte("=!~", expr[k]) >= 0 {
					k++
				}
				k = skipSpace(k)
				if k >= len(expr) || expr[k] != '"' {
					return nil, nil, fmt.Errorf("matcher without a quoted value at %d", k)
				}
				end := strings.IndexByte(expr[k+1:], '"')
				if end < 0 {
					return nil, nil, fmt.Errorf("unterminated matcher value at %d", k)
				}
				j = skipSpace(k + 1 + end + 1)
				if j < len(expr) && expr[j] == ',' {
					j++
				}
			}
			i = j + 1
		case c == '(' && labelList:
			j := strings.IndexByte(expr[i:], ')')
			if j < 0 {
				return nil, nil, fmt.Errorf("unterminated label list at %d", i)
			}
			for _, l := range strings.Split(expr[i+1:i+j], ",") {
				if l = strings.TrimSpace(l); l != "" {
					labels = append(labels, l)
				}
			}
			labelList = false
			i += j + 1
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (isPart(expr[i]) || expr[i] == '.') {
				i++
			}
		case isStart(c):
			j := i
			for j < len(expr) && isPart(expr[j]) {
				j++
			}
			word := expr[i:j]
			next := skipSpace(j)
			switch {
			case promqlKeywords[strings.ToLower(word)]:
				switch strings.ToLower(word) {
				case "by", "without", "on", "ignoring", "group_left", "group_right":
					labelList = true
				}
			case next < len(expr) && expr[next] == '(':
				// A function or aggregation.
			default:
				metrics = append(metrics, word)
			}
			i = j
		default:
			i++
		}
	}
	return metrics, labels, nil
}

// checkExpr reports metrics the bot and workers do not serve and labels
// none of the expression's metrics has.
func checkExpr(doc metricDoc, expr string) error {
	metrics, labels, err := selectors(expr)
	if err != nil {
		return fmt.Errorf("%q: %w", expr, err)
	}
	if len(metrics) == 0 {
		return fmt.Errorf("%q: uses no metric", expr)
	}
	have := map[string]bool{}
	for _, m := range metrics {
		e, ok := doc[m]
		if !ok {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, cut := strings.CutSuffix(m, suffix); cut && doc[base].typ == "histogram" {
					e, ok = doc[base], true
					if suffix == "_bucket" {
						have["le"] = true
					}
				}
			}
		}
		if !ok {
			return fmt.Errorf("%q: metric %s is not served by the bot or the workers (docs/metrics.md)", expr, m)
		}
		for l := range e.labels {
			have[l] = true
		}
	}
	for _, l := range labels {
		if !have[l] {
			return fmt.Errorf("%q: label %q is on none of its metrics %v", expr, l, metrics)
		}
	}
	return nil
}

// ruleFile is Prometheus's rule file format, decoded with unknown fields
// refused.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert         string            `yaml:"alert"`
			Record        string            `yaml:"record"`
			Expr          string            `yaml:"expr"`
			For           string            `yaml:"for"`
			KeepFiringFor string            `yaml:"keep_firing_for"`
			Labels        map[string]string `yaml:"labels"`
			Annotations   map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func checkRules(doc metricDoc, src []byte) ([]string, error) {
	var rf ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		return nil, fmt.Errorf("decode rules: %w", err)
	}
	var alerts []string
	for _, g := range rf.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			return nil, fmt.Errorf("group %q: a name and rules are required", g.Name)
		}
		for _, r := range g.Rules {
			if (r.Alert == "") == (r.Record == "") {
				return nil, fmt.Errorf("rule %q%q: exactly one of alert and record", r.Alert, r.Record)
			}
			for _, d := range []string{r.For, r.KeepFiringFor, g.Interval} {
				if d != "" {
					if _, err := model.ParseDuration(d); err != nil {
						return nil, fmt.Errorf("rule %s: %w", r.Alert, err)
					}
				}
			}
			if r.Alert != "" && r.Labels["severity"] == "" {
				return nil, fmt.Errorf("alert %s: no severity label", r.Alert)
			}
			if err := checkExpr(doc, r.Expr); err != nil {
				return nil, fmt.Errorf("rule %s%s: %w", r.Alert, r.Record, err)
			}
			alerts = append(alerts, r.Alert)
		}
	}
	return alerts, nil
}

func TestAlertRules(t *testing.T) {
	doc := readMetricDoc(t)
	src, err := os.ReadFile("prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := checkRules(doc, src)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(alerts)
	t.Logf("alerts: %v", alerts)
	for _, want := range []string{"RedfixQueueBackingUp", "RedfixNoJobFinished", "RedfixLandRateLow", "RedfixJobErrorRateJump", "RedfixJobErrorRateHigh", "RedfixWebhookBacklog", "RedfixRedisMemoryFull", "RedfixBotAbsent"} {
		if !strings.Contains(strings.Join(alerts, " "), want) {
			t.Errorf("no alert %s", want)
		}
	}

	// Broken copies fail, naming what is wrong.
	for _, c := range []struct{ name, old, new, want string }{
		{"misspelled metric", "max(redfix_queue_lag_jobs) > 50", "max(redfix_queue_lag_job) > 50", "redfix_queue_lag_job is not served"},
		{"unknown label", `{result=~"failed|retried"}[30m]))
            / sum(rate(redfix_jobs_total[30m]))
          ) > 0.3`, `{status=~"failed|retried"}[30m]))
            / sum(rate(redfix_jobs_total[30m]))
          ) > 0.3`, `label "status"`},
		{"unknown field", "        for: 15m\n", "        fore: 15m\n", "fore"},
		{"bad duration", "        for: 10m\n", "        for: 10 minutes\n", "10 minutes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(src), c.old) {
				t.Fatalf("alerts.yaml no longer holds %q: update the case", c.old)
			}
			_, err := checkRules(doc, []byte(strings.Replace(string(src), c.old, c.new, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error about %q", err, c.want)
			}
		})
	}
}

// promtool runs Prometheus's rule unit tests (deploy/prometheus/alerts_test.yaml)
// in dir with Prometheus's own engine.
func promtool(t *testing.T, dir string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (.ci/run installs Debian's prometheus)")
		}
		t.Skip("promtool is not installed (apt-get install --no-install-recommends prometheus)")
	}
	cmd := exec.Command(bin, "test", "rules", "alerts_test.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The alerts fire, and stay silent, as alerts_test.yaml says, in
// Prometheus's own rule engine: RedfixNoJobFinished fires when no worker is
// scraped at all while jobs wait, not only when workers finish nothing.
func TestAlertRulesUnitTests(t *testing.T) {
	out, err := promtool(t, "prometheus")
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Log(out)

	// The tests catch the rule as it was, silent when its workers' series
	// are gone.
	src, err := os.ReadFile("prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("prometheus/alerts_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fixed := `(sum(increase(redfix_jobs_total{result=~"published|no_patch|failed"}[1h])) or vector(0)) < 1`
	if !strings.Contains(string(src), fixed) {
		t.Fatalf("alerts.yaml no longer holds %q: update the case", fixed)
	}
	old := `sum(increase(redfix_jobs_total{result=~"published|no_patch|failed"}[1h])) < 1`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), []byte(strings.Replace(string(src), fixed, old, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = promtool(t, dir)
	if err == nil || !strings.Contains(out, "no worker scraped") {
		t.Fatalf("the rule without \"or vector(0)\" passed the unit tests (%v):\n%s", err, out)
	}
}

func TestGrafanaDashboard(t *testing.T) {
	doc := readMetricDoc(t)
	src, err := os.ReadFile("grafana/redfix.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(src, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Panels) < 8 {
		t.Fatalf("%d panels", len(d.Panels))
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q: no queries", p.Title)
		}
		for _, q := range p.Targets {
			if err := checkExpr(doc, q.Expr); err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
			}
		}
	}
}
