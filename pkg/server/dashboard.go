package server

import (
	"html/template"
	"net/http"
	"sort"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

var dashboardTmpl = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"short": task.Short,
	"pct":   func(r float64) float64 { return 100 * r },
	"dur":   func(sec float64) string { return time.Duration(sec * float64(time.Second)).Round(time.Second).String() },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>redfix</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
.n{text-align:right}.published{color:#176f2c}.failed,.no_patch{color:#a33}.dropped{color:#777}
</style></head><body>
<h1>redfix</h1>
<p>Red CI in, reviewed pull requests out. {{.Total}} tasks; publish rate {{printf "%.1f" .PublishRate}}% of the tasks that reached a worker.</p>
{{with .Land}}<h2>Land rate</h2>
<p>{{printf "%.1f" (pct .Overall.LandRate)}}% of the published pull requests landed ({{.Overall.Landed}} of {{.Overall.Published}}; {{.Overall.LandedWithEdits}} after a human's edits). {{.Overall.Open}} open, {{.Overall.ClosedUnmerged}} closed unmerged; {{.Overall.Reviewed}} reviewed, changes requested on {{.Overall.ChangesRequested}}.{{if .Overall.Reviewed}} Mean time to first review {{dur .Overall.MeanSecondsToFirstReview}}.{{end}}{{if .Overall.Landed}} Mean time to land {{dur .Overall.MeanSecondsToLand}}.{{end}}</p>
{{if .Repos}}<table><tr><th>repository</th><th>published</th><th>landed</th><th>with edits</th><th>closed unmerged</th><th>open</th><th>reviewed</th><th>changes requested</th><th>land rate</th></tr>
{{range .Repos}}<tr><td>{{.Repo}}</td><td class="n">{{.Published}}</td><td class="n">{{.Landed}}</td><td class="n">{{.LandedWithEdits}}</td><td class="n">{{.ClosedUnmerged}}</td><td class="n">{{.Open}}</td><td class="n">{{.Reviewed}}</td><td class="n">{{.ChangesRequested}}</td><td class="n">{{printf "%.1f" (pct .LandRate)}}%</td></tr>
{{end}}</table>{{end}}{{end}}
<h2>Tasks by status</h2>
<table><tr><th>status</th><th>tasks</th><th>meaning</th></tr>
{{range .Counts}}<tr><td class="{{.Status}}">{{.Status}}</td><td class="n">{{.N}}</td><td>{{.Meaning}}</td></tr>
{{end}}</table>
<h2>Recent tasks</h2>
<table><tr><th>task</th><th>failing test</th><th>blame</th><th>status</th><th>reason / pull request</th></tr>
{{range .Recent}}<tr><td><a href="/api/v1/tasks/{{.ID}}">{{.ID}}</a></td><td>{{.Title}}</td><td>{{short .Bisection.Blame}}</td>
<td class="{{.Status}}">{{.Status}}</td><td>{{if .PullRequest}}{{.PullRequest}}{{else}}{{.Reason}}{{end}}</td></tr>
{{end}}</table>
<p><a href="/metrics">metrics</a> · <a href="/api/v1/tasks">tasks as JSON</a> · <a href="/api/v1/stats">stats as JSON</a></p>
</body></html>
`))

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

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) error {
	counts, err := s.tasks.CountByStatus(r.Context())
	if err != nil {
		return err
	}
	recent, err := s.tasks.ListTasks(r.Context(), 50)
	if err != nil {
		return err
	}
	var rows []statusCount
	var total int64
	for st, meaning := range meanings {
		rows = append(rows, statusCount{Status: st, N: counts[st], Meaning: meaning})
		total += counts[st]
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Status < rows[j].Status })
	data := map[string]any{"Counts": rows, "Recent": recent, "Total": total, "PublishRate": 100 * publishRate(counts)}
	if s.land != nil {
		land, err := s.land.LandRate(r.Context())
		if err != nil {
			return err
		}
		data["Land"] = land
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return dashboardTmpl.Execute(w, data)
}
