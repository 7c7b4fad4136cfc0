package server

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/clip"

	"github.com/redfix/redfix/pkg/task"
)

var dashboardTmpl = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"short": task.Short,
	"rate": func(r *float64) string {
		if r == nil {
			return "—"
		}
		return fmt.Sprintf("%.0f%%", 100**r)
	},
	"landRate": landRate,
	"reason":   shownReason,
	"decided":  func(s task.LandStats) int64 { return s.Landed + s.ClosedUnmerged },
	"kind":     kindName,
	"dur": func(sec float64) string {
		return time.Duration(sec * float64(time.Second)).Round(time.Second).String()
	},
	"usd":   func(v float64) string { return fmt.Sprintf("$%.4f", v) },
	"num":   func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"chart": rateChart,
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"sorted": func(m map[string]int64) []kv {
		out := make([]kv, 0, len(m))
		for k, v := range m {
			out = append(out, kv{k, v})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].N > out[j].N || out[i].N == out[j].N && out[i].K < out[j].K })
		return out
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>redfix</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1300px}
h2{margin-top:1.6em;border-bottom:1px solid #eee}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
.n{text-align:right}.published,.landed,.landed_with_edits{color:#176f2c}.failed,.no_patch,.closed_unmerged{color:#a33}.dropped{color:#777}.unreviewed{color:#8a5a00;font-size:smaller}
.banner{background:#fde2e1;border:1px solid #c33;padding:.6em 1em;margin:1em 0;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:1em}.card{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;min-width:11em}
.card b{display:block;font-size:1.7em}.muted{color:#777}.legend span{margin-right:1em}
.charts{display:flex;flex-wrap:wrap;gap:1.5em}figure{margin:0}td{overflow-wrap:break-word;max-width:32em}
</style></head><body>
<h1>redfix</h1>
{{if .Unavailable}}<div class="banner" role="alert" id="store-unavailable">Could not read {{range $i, $w := .Unavailable}}{{if $i}}; {{end}}{{$w}}{{end}}. The figures below are what could be read; the rest shows as missing.</div>{{end}}
<p>Red CI in, reviewed pull requests out.</p>

<div class="cards">
<div class="card">Land rate<b id="land-rate">{{.LandRate}}</b><span class="muted">{{.LandRateBasis}}</span></div>
<div class="card">Publish rate<b id="publish-rate">{{landRate .PublishRate}}</b><span class="muted">{{if .PublishRate}}of the tasks settled, all time: published ÷ (published + no_patch + failed){{else if .Tasks}}no task settled yet{{else}}not read{{end}}</span></div>
<div class="card">Red CI → pull request<b id="time-to-pr">{{with .TimeToPR}}{{if .Samples}}{{dur .P50Seconds}}{{else}}—{{end}}{{else}}—{{end}}</b><span class="muted">{{with .TimeToPR}}{{if .Samples}}p50; p90 {{dur .P90Seconds}}; over {{.Samples}} in 30 days{{else}}no pull request in 30 days{{end}}{{end}}</span></div>
<div class="card">Job queue<b id="queue-depth">{{with .Jobs}}{{.Depth}}{{else}}—{{end}}</b><span class="muted">{{with .Jobs}}{{if .Depth}}oldest job {{dur .OldestAgeSeconds}} old{{else}}empty{{end}}{{else}}not read{{end}}</span></div>
<div class="card">Reports waiting for triage<b id="report-backlog">{{with .Reports}}{{.Depth}}{{else}}—{{end}}</b><span class="muted">{{with .Reports}}{{if .Depth}}oldest {{dur .OldestAgeSeconds}} old{{else}}none{{end}}{{else}}not read{{end}}</span></div>
</div>

<h2>Land rate and publish rate over time</h2>
<p class="legend"><span style="color:#1a7f37">● publish rate</span> published ÷ repairs settled in the period · <span style="color:#0b5cad">● land rate</span> landed ÷ pull requests decided (landed or closed) in the period · <span style="color:#999">▮ pull requests published</span></p>
{{with .Overall}}<div class="charts">
<figure><figcaption>Per day, last 30 days</figcaption>{{chart "daily" .Daily 600 170}}</figure>
<figure><figcaption>Per week, last 12 weeks</figcaption>{{chart "weekly" .Weekly 600 170}}</figure>
</div>{{else}}<p class="muted">No history.</p>{{end}}

<h2>Pull requests</h2>
{{with .Overall}}<table id="pr-counts"><tr><th></th><th>published</th><th>reviewed</th><th>landed</th><th>closed unmerged</th></tr>
<tr><td>last 30 days</td><td class="n">{{.Last30.Published}}</td><td class="n">{{.Last30.Reviewed}}</td><td class="n">{{.Last30.Landed}}</td><td class="n">{{.Last30.Closed}}</td></tr>
{{with $.Land}}{{if .Overall.Published}}<tr><td>all time, on the forges</td><td class="n">{{.Overall.Published}}</td><td class="n">{{.Overall.Reviewed}}</td><td class="n">{{.Overall.Landed}}</td><td class="n">{{.Overall.ClosedUnmerged}}</td></tr>{{end}}{{end}}
</table>{{end}}
{{with .Land}}{{if .Overall.Published}}<p>On the forges: {{if .Overall.LandRate}}{{landRate .Overall.LandRate}} of the decided pull requests landed ({{.Overall.Landed}} of {{decided .Overall}}; {{.Overall.LandedWithEdits}} after a human's edits){{else}}no pull request decided yet, so no land rate{{end}}. {{.Overall.Published}} published: {{.Overall.Open}} open, {{.Overall.ClosedUnmerged}} closed unmerged{{if .Overall.ClosedByBot}} ({{.Overall.ClosedByBot}} by redfix itself: no longer needed, or conflicting with the default branch){{end}}; changes requested on {{.Overall.ChangesRequested}}.{{if .Overall.Reviewed}} Mean time to first review {{dur .Overall.MeanSecondsToFirstReview}}.{{end}}{{if .Overall.Landed}} Mean time to land {{dur .Overall.MeanSecondsToLand}}.{{end}}</p>{{end}}{{end}}
<h3>Recent pull requests</h3>
{{if .PullRequests}}<table id="recent-prs"><tr><th>opened</th><th>repository</th><th>failing test</th><th>state</th><th>pull request</th></tr>
{{range .PullRequests}}<tr><td>{{when .At}}</td><td>{{.Repo}}</td><td><a href="/api/v1/tasks/{{.TaskID}}">{{.Title}}</a></td><td class="{{.State}}">{{.State}}{{if .Unreviewed}} <span class="unreviewed" title="no model reviewed this patch">unreviewed</span>{{end}}</td><td>{{if .Link}}<a href="{{.Link}}">{{.URL}}</a>{{else}}{{.URL}}{{end}}</td></tr>
{{end}}</table>{{else}}<p class="muted">None yet.</p>{{end}}

<h2>By repository</h2>
{{if .Repos}}<table id="repos"><tr><th>repository</th><th>published (30 d)</th><th>landed</th><th>closed</th><th>publish rate</th><th>land rate</th><th>per week, last 12 weeks</th></tr>
{{range .Repos}}<tr><td>{{.Repo}}</td><td class="n">{{.Last30.Published}}</td><td class="n">{{.Last30.Landed}}</td><td class="n">{{.Last30.Closed}}</td><td class="n">{{rate .Last30.PublishRate}}</td><td class="n">{{rate .Last30.LandRate}}</td><td>{{chart (printf "weekly %s" .Repo) .Weekly 360 110}}</td></tr>
{{end}}</table>{{else}}<p class="muted">No repository has history yet.</p>{{end}}
{{with .Land}}{{if .Repos}}<table><tr><th>on the forges, all time</th><th>published</th><th>landed</th><th>with edits</th><th>closed unmerged</th><th>open</th><th>reviewed</th><th>changes requested</th><th>land rate</th></tr>
{{range .Repos}}<tr><td>{{.Repo}}</td><td class="n">{{.Published}}</td><td class="n">{{.Landed}}</td><td class="n">{{.LandedWithEdits}}</td><td class="n">{{.ClosedUnmerged}}</td><td class="n">{{.Open}}</td><td class="n">{{.Reviewed}}</td><td class="n">{{.ChangesRequested}}</td><td class="n">{{landRate .LandRate}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{with .Land}}{{if .Overall.Published}}<table id="kinds"><tr><th>on the forges, by kind</th><th>opened</th><th>landed</th><th>closed unmerged</th><th>open</th><th>land rate</th></tr>
{{range .Kinds}}<tr><td>{{kind .Kind}}</td><td class="n">{{.Published}}</td><td class="n">{{.Landed}}</td><td class="n">{{.ClosedUnmerged}}</td><td class="n">{{.Open}}</td><td class="n">{{landRate .LandRate}}</td></tr>
{{end}}</table>{{end}}{{end}}

{{with .Window}}<h2>Triage, last {{.Days}} days</h2>
<table id="reports"><tr><th>reports accepted</th><th>rejected by the API</th><th>triaged</th><th>failed in triage</th><th>failure groups queued</th><th>dropped</th></tr>
<tr><td class="n">{{.ReportsAccepted}}</td><td class="n">{{.ReportsRejected}}</td><td class="n">{{.ReportsTriaged}}</td><td class="n">{{$.TriageFailedTotal}}</td><td class="n">{{.Queued}}</td><td class="n">{{$.DroppedTotal}}</td></tr></table>
<div class="charts"><div><h3>Drops by reason</h3>{{if .Dropped}}<table id="drops"><tr><th>reason</th><th>groups</th></tr>{{range sorted .Dropped}}<tr><td>{{.K}}</td><td class="n">{{.N}}</td></tr>{{end}}</table>{{else}}<p class="muted">None.</p>{{end}}</div>
<div><h3>Failed in triage</h3>{{if .TriageFailed}}<table id="triage-failed"><tr><th>class</th><th>reports</th></tr>{{range sorted .TriageFailed}}<tr><td>{{.K}}</td><td class="n">{{.N}}</td></tr>{{end}}</table>{{else}}<p class="muted">None.</p>{{end}}</div>
<div><h3>Rejections by gate</h3>{{if .GateRejections}}<table id="gates"><tr><th>gate</th><th>rounds rejected</th></tr>{{range sorted .GateRejections}}<tr><td>{{.K}}</td><td class="n">{{.N}}</td></tr>{{end}}</table>{{else}}<p class="muted">None.</p>{{end}}</div>
<div><h3>Model use</h3><table id="spend"><tr><td>repairs</td><td class="n">{{.Repairs}}</td></tr><tr><td>tokens</td><td class="n">{{.Tokens}}</td></tr><tr><td>tokens per repair</td><td class="n">{{num .TokensPerRepair}}</td></tr><tr><td>cost</td><td class="n">{{usd .CostUSD}}</td></tr><tr><td>cost per repair</td><td class="n">{{usd .CostPerRepair}}</td></tr></table></div>
</div>{{end}}
{{if .TriageFailures}}<h3>Reports triage gave up on</h3>
<table id="triage-failures"><tr><th>when</th><th>report</th><th>repository</th><th>class</th><th>reason</th></tr>
{{range .TriageFailures}}<tr><td>{{when .At}}</td><td>{{.Submission}}</td><td>{{.Repo}}</td><td>{{.Class}}</td><td>{{reason .Reason}}</td></tr>
{{end}}</table>{{end}}

<h2>Tasks by status</h2>
{{if .Counts}}<table><tr><th>status</th><th>tasks</th><th>meaning</th></tr>
{{range .Counts}}<tr><td class="{{.Status}}">{{.Status}}</td><td class="n">{{.N}}</td><td>{{.Meaning}}</td></tr>
{{end}}</table><p>{{.Total}} tasks.</p>{{else}}<p class="muted">Not read.</p>{{end}}
<h2>Recent tasks</h2>
<table><tr><th>task</th><th>failing test</th><th>blame</th><th>status</th><th>reason / pull request</th></tr>
{{range .Recent}}<tr><td><a href="/api/v1/tasks/{{.ID}}">{{.ID}}</a></td><td>{{.Title}}</td><td>{{short .Bisection.Blame}}</td>
<td class="{{.Status}}">{{.Status}}</td><td>{{if .PullRequest}}{{.PullRequest}}{{else}}{{reason .Reason}}{{end}}</td></tr>
{{end}}</table>
<p><a href="/metrics">metrics</a> · <a href="/api/v1/tasks">tasks as JSON</a> · <a href="/api/v1/stats">stats as JSON</a></p>
</body></html>
`))

type kv struct {
	K string
	N int64
}

var meanings = map[task.Status]string{
	task.StatusQueued:    "triaged, waiting for a worker",
	task.StatusRunning:   "a worker's agent is on it",
	task.StatusPublished: "a pull request passed every gate and was opened",
	task.StatusNoPatch:   "no candidate patch passed the gates",
	task.StatusFailed:    "the machinery failed (see the reason)",
	task.StatusDropped:   "triage stopped it: flaky, duplicate, or not reproducible",
}

type statusCount struct {
	Status  task.Status
	N       int64
	Meaning string
}

// dashboardData is Stats with what the page adds.
type dashboardData struct {
	Stats
	Counts                          []statusCount
	Total                           int64
	Recent                          []task.Task
	LandRate, LandRateBasis         string
	TriageFailedTotal, DroppedTotal int64
}

// dashboard renders what it can read: a store or stream that does not
// answer is named in a banner, never a 500.
func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) error {
	now := time.Now()
	d := dashboardData{Stats: s.collect(r.Context(), now)}
	if d.Tasks != nil {
		for st, meaning := range meanings {
			d.Counts = append(d.Counts, statusCount{Status: st, N: d.Tasks[st], Meaning: meaning})
			d.Total += d.Tasks[st]
		}
		sort.Slice(d.Counts, func(i, j int) bool { return d.Counts[i].Status < d.Counts[j].Status })
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.readTimeout())
	defer cancel()
	if !d.storeDown { // a store that is down is named in the banner already
		if recent, err := s.tasks.FindTasks(ctx, task.Filter{Limit: 50}); err != nil {
			s.log.Warn("read for the dashboard", zap.String("what", "recent tasks"), zap.Error(err))
			d.Unavailable = append(d.Unavailable, "recent tasks")
		} else {
			d.Recent = recent
		}
	}
	d.LandRate, d.LandRateBasis = landHeadline(d.Stats)
	if d.Window != nil {
		for _, n := range d.Window.TriageFailed {
			d.TriageFailedTotal += n
		}
		for _, n := range d.Window.Dropped {
			d.DroppedTotal += n
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return dashboardTmpl.Execute(w, d)
}

// maxShownReason bounds a reason in a cell of the dashboard.
const maxShownReason = 300

// shownReason is a reason as a cell shows it: on one line, at most
// maxShownReason characters, a cut marked. A reason can be a tool's whole
// usage text or a setup's output; the task (GET /api/v1/tasks/{id}, linked
// from the row) and /api/v1/stats keep it whole.
func shownReason(s string) string {
	return clip.OneLine(s, maxShownReason)
}

// landRate formats a rate to a tenth of a percent (a land rate, the
// publish rate): "—" while there is nothing to divide by.
func landRate(r *float64) string {
	if r == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}

// landHeadline is the land rate the page leads with. Everywhere on the page,
// in /api/v1/stats and in /metrics a land rate is landed ÷ the pull
// requests decided (landed or closed unmerged), and none ("—", null) while
// none is decided: open pull requests say nothing yet. All time on the forges
// when outcomes are followed there, else over the last 30 days of history.
func landHeadline(st Stats) (value, basis string) {
	if st.Land != nil && st.Land.Overall.Published > 0 {
		o := st.Land.Overall
		return landRate(o.LandRate), fmt.Sprintf("%d landed of %d decided on the forges, all time (%d published, %d open)", o.Landed, o.Landed+o.ClosedUnmerged, o.Published, o.Open)
	}
	if st.Overall != nil && st.Overall.Last30.Published+st.Overall.Last30.Landed+st.Overall.Last30.Closed > 0 {
		o := st.Overall.Last30
		return landRate(o.LandRate), fmt.Sprintf("%d landed of %d decided, last 30 days (%d published)", o.Landed, o.Landed+o.Closed, o.Published)
	}
	if st.Land == nil && st.Overall == nil {
		return "—", "not read"
	}
	return "—", "no pull request published yet"
}

// kindName is how the dashboard names a kind of pull request.
func kindName(k string) string {
	switch k {
	case task.KindFix:
		return "fixes"
	case task.KindRevert:
		return "reverts"
	case task.KindRevised:
		return "fixes revised on review"
	}
	return k
}
