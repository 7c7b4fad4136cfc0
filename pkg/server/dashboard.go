package server

import (
	"html/template"
	"net/http"
	"sort"

	"github.com/redfix/redfix/pkg/task"
)

var dashboardTmpl = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"short": task.Short,
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>redfix</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
.n{text-align:right}.published{color:#176f2c}.failed,.no_patch{color:#a33}.dropped{color:#777}
</style></head><body>
<h1>redfix</h1>
<p>Red CI in, reviewed pull requests out. {{.Total}} tasks; publish rate {{printf "%.1f" .PublishRate}}% of the tasks that reached a worker.</p>
<h2>Tasks by status</h2>
<table><tr><th>status</th><th>tasks</th><th>meaning</th></tr>
{{range .Counts}}<tr><td class="{{.Status}}">{{.Status}}</td><td class="n">{{.N}}</td><td>{{.Meaning}}</td></tr>
{{end}}</table>
<h2>Recent tasks</h2>
<table><tr><th>task</th><th>failing test</th><th>blame</th><th>status</th><th>reason / pull request</th></tr>
{{range .Recent}}<tr><td><a href="/api/v1/tasks/{{.ID}}">{{.ID}}</a></td><td>{{.Title}}</td><td>{{short .Bisection.Blame}}</td>
<td class="{{.Status}}">{{.Status}}</td><td>{{if .PullRequest}}{{.PullRequest}}{{else}}{{.Reason}}{{end}}</td></tr>
{{end}}</table>
<p><a href="/metrics">metrics</a> · <a href="/api/v1/tasks">tasks as JSON</a></p>
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
	worked := counts[task.StatusPublished] + counts[task.StatusNoPatch] + counts[task.StatusFailed]
	rate := 0.0
	if worked > 0 {
		rate = 100 * float64(counts[task.StatusPublished]) / float64(worked)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return dashboardTmpl.Execute(w, map[string]any{"Counts": rows, "Recent": recent, "Total": total, "PublishRate": rate})
}
