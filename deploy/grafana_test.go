package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The dashboard's queries, evaluated in Prometheus's own engine (promtool)
// against what two bot replicas and two workers export, with the alerts
// beside them. Every bot replica exports the same cluster counters (the
// fixes' outcomes) and gauges (the queues): a query that sums them counts
// every pull request once per replica. The land rate is landed ÷ decided
// (landed or closed unmerged) here as on the bot's own page and in the
// alert, never landed ÷ published.
//
// The scenario: over the last day, acme/api had 10 pull requests
// published, 6 reviewed, 3 landed and 1 closed unmerged; acme/web 4, 2, 1
// and 3 (7 days: the same). Per-process counters differ by replica or
// worker; gauges of the cluster are equal on both bots.
var grafanaScenario = `
      - series: 'redfix_fixes_published_total{instance="bot-0",repository="acme/api"}'
        values: '0x288 10x287'
      - series: 'redfix_fixes_published_total{instance="bot-1",repository="acme/api"}'
        values: '0x288 10x287'
      - series: 'redfix_fixes_reviewed_total{instance="bot-0",repository="acme/api"}'
        values: '0x288 6x287'
      - series: 'redfix_fixes_reviewed_total{instance="bot-1",repository="acme/api"}'
        values: '0x288 6x287'
      - series: 'redfix_fixes_landed_total{instance="bot-0",repository="acme/api"}'
        values: '0x288 3x287'
      - series: 'redfix_fixes_landed_total{instance="bot-1",repository="acme/api"}'
        values: '0x288 3x287'
      - series: 'redfix_fixes_closed_unmerged_total{instance="bot-0",repository="acme/api"}'
        values: '0x288 1x287'
      - series: 'redfix_fixes_closed_unmerged_total{instance="bot-1",repository="acme/api"}'
        values: '0x288 1x287'
      - series: 'redfix_fixes_published_total{instance="bot-0",repository="acme/web"}'
        values: '0x288 4x287'
      - series: 'redfix_fixes_published_total{instance="bot-1",repository="acme/web"}'
        values: '0x288 4x287'
      - series: 'redfix_fixes_reviewed_total{instance="bot-0",repository="acme/web"}'
        values: '0x288 2x287'
      - series: 'redfix_fixes_reviewed_total{instance="bot-1",repository="acme/web"}'
        values: '0x288 2x287'
      - series: 'redfix_fixes_landed_total{instance="bot-0",repository="acme/web"}'
        values: '0x288 1x287'
      - series: 'redfix_fixes_landed_total{instance="bot-1",repository="acme/web"}'
        values: '0x288 1x287'
      - series: 'redfix_fixes_closed_unmerged_total{instance="bot-0",repository="acme/web"}'
        values: '0x288 3x287'
      - series: 'redfix_fixes_closed_unmerged_total{instance="bot-1",repository="acme/web"}'
        values: '0x288 3x287'
      - series: 'redfix_queue_lag_jobs{instance="bot-0"}'
        values: '30x576'
      - series: 'redfix_queue_lag_jobs{instance="bot-1"}'
        values: '30x576'
      - series: 'redfix_triage_backlog_reports{instance="bot-0"}'
        values: '3x576'
      - series: 'redfix_triage_backlog_reports{instance="bot-1"}'
        values: '3x576'
      - series: 'redfix_queue_oldest_job_age_seconds{instance="bot-0"}'
        values: '600x576'
      - series: 'redfix_queue_oldest_job_age_seconds{instance="bot-1"}'
        values: '600x576'
      - series: 'redfix_triage_oldest_report_age_seconds{instance="bot-0"}'
        values: '120x576'
      - series: 'redfix_triage_oldest_report_age_seconds{instance="bot-1"}'
        values: '120x576'
      - series: 'redfix_parked_messages{instance="bot-0",stream="jobs"}'
        values: '3x576'
      - series: 'redfix_parked_messages{instance="bot-1",stream="jobs"}'
        values: '3x576'
      - series: 'redfix_reports_total{instance="bot-0",result="accepted"}'
        values: '0+1x576'
      - series: 'redfix_reports_total{instance="bot-1",result="accepted"}'
        values: '0+1x576'
      - series: 'redfix_triage_outcomes_total{instance="bot-0",outcome="dropped",reason="flaky"}'
        values: '0x288 5x287'
      - series: 'redfix_triage_outcomes_total{instance="bot-1",outcome="dropped",reason="flaky"}'
        values: '0x288 2x287'
      - series: 'redfix_triage_reports_total{instance="bot-0",result="triaged"}'
        values: '0x288 10x287'
      - series: 'redfix_triage_reports_total{instance="bot-1",result="triaged"}'
        values: '0x288 4x287'
      - series: 'redfix_http_request_duration_seconds_count{instance="bot-0",method="POST",route="/api/v1/reports",code="2xx"}'
        values: '0+30x576'
      - series: 'redfix_http_request_duration_seconds_count{instance="bot-1",method="POST",route="/api/v1/reports",code="2xx"}'
        values: '0+30x576'
      - series: 'redfix_jobs_total{instance="worker-0",result="published"}'
        values: '0+30x576'
      - series: 'redfix_jobs_total{instance="worker-1",result="published"}'
        values: '0+15x576'
      - series: 'redfix_jobs_total{instance="worker-0",result="failed"}'
        values: '0+15x576'
      - series: 'redfix_gate_rejections_total{instance="worker-0",gate="judge"}'
        values: '0+1x576'
      - series: 'redfix_gate_rejections_total{instance="worker-1",gate="judge"}'
        values: '0+1x576'
      - series: 'redfix_llm_cost_usd_total{instance="worker-0"}'
        values: '0+2.5x576'
      - series: 'redfix_llm_cost_usd_total{instance="worker-1"}'
        values: '0+1.25x576'
      - series: 'redfix_llm_tokens_total{instance="worker-0",kind="input"}'
        values: '0+500x576'
      - series: 'redfix_llm_tokens_total{instance="worker-1",kind="input"}'
        values: '0+250x576'
      - series: 'redfix_llm_tokens_total{instance="worker-0",kind="output"}'
        values: '0+50x576'
` + histogramSeries("redfix_job_llm_tokens_bucket", "1000", "2000") +
	histogramSeries("redfix_job_llm_cost_usd_bucket", "0.01", "0.1") +
	histogramSeries("redfix_job_duration_seconds_bucket", "60", "300")

// histogramSeries is a histogram on both workers: half of each one's
// observations in the first bucket, the rest in the second.
func histogramSeries(name, first, second string) string {
	var b strings.Builder
	for _, w := range []string{"worker-0", "worker-1"} {
		for _, le := range []struct{ le, step string }{{first, "1"}, {second, "2"}, {"+Inf", "2"}} {
			fmt.Fprintf(&b, "      - series: '%s{instance=%q,le=%q}'\n        values: '0+%sx576'\n", name, w, le.le, le.step)
		}
	}
	return b.String()
}

// grafanaWant is each panel's queries' values in the scenario at its
// end, times 1000 and rounded (promtool compares exactly), by panel title
// and legend, then by the series' labels.
var grafanaWant = map[string]map[string]float64{
	// Land rate: landed ÷ decided. All: 4 of 8; acme/api 3 of 4; acme/web
	// 1 of 4. (Landed ÷ published would be 4 of 14.)
	"Land rate (7 days)|all":            {"{}": 500},
	"Land rate (7 days)|{{repository}}": {`{repository="acme/api"}`: 750, `{repository="acme/web"}`: 250},
	// Each pull request once, not once per bot replica.
	"Pull requests per day|published":       {"{}": 14000},
	"Pull requests per day|reviewed":        {"{}": 8000},
	"Pull requests per day|landed":          {"{}": 4000},
	"Pull requests per day|closed unmerged": {"{}": 4000},
	"Queue|jobs waiting or held":            {"{}": 30000},
	"Queue|reports not triaged":             {"{}": 3000},
	"Oldest waiting|job":                    {"{}": 600000},
	"Oldest waiting|report":                 {"{}": 120000},
	// Per process: summed over the workers.
	"Jobs by result|{{result}}":   {`{result="published"}`: 150, `{result="failed"}`: 50},
	"Rejections by gate|{{gate}}": {`{gate="judge"}`: 576000},
	// Per bot replica: summed.
	"Triage: drops by reason, reports by result|dropped: {{reason}}": {`{reason="flaky"}`: 7000},
	"Triage: drops by reason, reports by result|reports {{result}}":  {`{result="triaged"}`: 14000},
	"Tokens and cost per repair (p50, p90)|tokens p50":               {"{}": 1000000},
	"Tokens and cost per repair (p50, p90)|tokens p90":               {"{}": 1800000},
	"Tokens and cost per repair (p50, p90)|cost p50 (USD)":           {"{}": 10},
	"Model spend per hour|USD":                                       {"{}": 45000},
	"Model spend per hour|tokens {{kind}}":                           {`{kind="input"}`: 9000000, `{kind="output"}`: 600000},
	"Job duration (p50, p90)|p50":                                    {"{}": 60000},
	"Job duration (p50, p90)|p90":                                    {"{}": 252000},
	"Bot HTTP by route and status|{{route}} {{code}}":                {`{code="2xx",route="/api/v1/reports"}`: 200},
	"Parked messages|{{stream}}":                                     {`{stream="jobs"}`: 3000},
}

// grafanaAlerts are the alerts in the same scenario: the parked messages
// counted once (3, not 6), the queue's 30 jobs not taken for 60.
const grafanaAlerts = `
      - eval_time: 2d
        alertname: RedfixMessagesParked
        exp_alerts:
          - exp_labels: {severity: warning, stream: jobs}
            exp_annotations:
              summary: "3 messages parked on jobs"
              description: "Messages gave up after their last retry. Fix the cause, then ` + "`bot replay --stream jobs`" + ` lists them and ` + "`bot replay --stream jobs --all`" + ` replays them."
      - eval_time: 2d
        alertname: RedfixQueueBackingUp
      - eval_time: 2d
        alertname: RedfixLandRateLow
      - eval_time: 2d
        alertname: RedfixBotAbsent
`

type grafanaTarget struct {
	Expr   string `json:"expr"`
	Legend string `json:"legendFormat"`
}

type grafanaDashboard struct {
	Panels []struct {
		Title   string          `json:"title"`
		Targets []grafanaTarget `json:"targets"`
	} `json:"panels"`
}

// grafanaRulesAndTests makes, from the dashboard, a rule file recording
// each query (grafana:pP_tT) and promtool's tests of their values.
func grafanaRulesAndTests(t *testing.T, d grafanaDashboard) (rules, tests string) {
	t.Helper()
	var rb, tb strings.Builder
	rb.WriteString("groups:\n  - name: grafana\n    rules:\n")
	fmt.Fprintf(&tb, "rule_files: [grafana_rules.yaml, alerts.yaml]\nevaluation_interval: 5m\ntests:\n  - name: dashboard and alerts, two bots and two workers\n    interval: 5m\n    input_series:%s    promql_expr_test:\n", grafanaScenario)
	seen := map[string]bool{}
	for i, p := range d.Panels {
		for j, q := range p.Targets {
			key := p.Title + "|" + q.Legend
			want, ok := grafanaWant[key]
			if !ok {
				t.Errorf("panel %q, query %q: no expected value in grafanaWant (add the panel's value in the scenario)", p.Title, q.Legend)
				continue
			}
			seen[key] = true
			name := fmt.Sprintf("grafana:p%d_t%d", i, j)
			expr, _ := json.Marshal(q.Expr) // a JSON string is a YAML string
			fmt.Fprintf(&rb, "      - record: %s\n        expr: %s\n", name, expr)
			fmt.Fprintf(&tb, "      - expr: round(%s * 1000)\n        eval_time: 2d\n        exp_samples:\n", name)
			for labels, v := range want {
				fmt.Fprintf(&tb, "          - labels: '%s'\n            value: %g\n", labels, v)
			}
		}
	}
	for key := range grafanaWant {
		if !seen[key] {
			t.Errorf("grafanaWant has %q, which the dashboard does not", key)
		}
	}
	tb.WriteString("    alert_rule_test:" + grafanaAlerts)
	return rb.String(), tb.String()
}

func TestGrafanaQueriesAgainstTwoReplicas(t *testing.T) {
	src, err := os.ReadFile("grafana/redfix.json")
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(src, &d); err != nil {
		t.Fatal(err)
	}
	rules, tests := grafanaRulesAndTests(t, d)
	var check yaml.Node
	if err := yaml.Unmarshal([]byte(tests), &check); err != nil {
		t.Fatalf("the generated tests: %v\n%s", err, tests)
	}
	alerts, err := os.ReadFile("prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{"grafana_rules.yaml": rules, "alerts_test.yaml": tests, "alerts.yaml": string(alerts)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := promtool(t, dir)
	if err != nil {
		t.Fatalf("the dashboard's queries in promtool: %v\n%s\nrules:\n%s", err, out, rules)
	}
}
