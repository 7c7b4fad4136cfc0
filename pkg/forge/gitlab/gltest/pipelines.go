package gltest

import (
	"archive/zip"
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pipeline is a CI pipeline of a project and its jobs.
type Pipeline struct {
	ID, IID    int64
	Ref, SHA   string
	BeforeSHA  string
	Status     string // success, failed, running, …
	Source     string // push, merge_request_event, schedule, web, …
	User       *User
	Jobs       []*Job
	CreatedAt  time.Time
	FinishedAt time.Time
	// MR is the merge request a merge_request_event pipeline tested.
	MR *MergeRequest
}

// Job is a job of a pipeline.
type Job struct {
	ID                  int64
	Name, Stage, Status string
	// JUnit is the report the job kept as artifacts:reports:junit: GitLab
	// reads it into the pipeline's test report; it is not in the archive.
	JUnit []byte
	// Files are the job's artifacts:paths, served as its archive (a zip).
	Files map[string][]byte
	// Trace is the job's log.
	Trace string
}

// AddPipeline records a finished pipeline of the project at path on ref
// at sha, its status its jobs' (failed when one failed), and returns it.
// It takes the lock.
func (s *Server) AddPipeline(path, ref, sha, source string, u *User, jobs ...*Job) *Pipeline {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.Project(path)
	if !ok {
		s.t.Fatalf("gltest: no project %s", path)
	}
	now := s.Now()
	pl := &Pipeline{ID: s.id(), IID: int64(len(p.Pipelines) + 1), Ref: ref, SHA: sha, Status: "success", Source: source, User: u, CreatedAt: now.Add(-time.Minute), FinishedAt: now}
	for _, j := range jobs {
		j.ID = s.id()
		if j.Stage == "" {
			j.Stage = "test"
		}
		if j.Status == "failed" {
			pl.Status = "failed"
		}
	}
	pl.Jobs = jobs
	p.Pipelines = append(p.Pipelines, pl)
	return pl
}

// AddMergeRequestPipeline records a finished pipeline of merge request
// mr of the project at path, run in that project on its head
// (refs/merge-requests/IID/head, source merge_request_event), and returns
// it. It takes the lock.
func (s *Server) AddMergeRequestPipeline(path string, mr *MergeRequest, u *User, jobs ...*Job) *Pipeline {
	pl := s.AddPipeline(path, "refs/merge-requests/"+strconv.FormatInt(mr.IID, 10)+"/head", mr.SHA, "merge_request_event", u, jobs...)
	s.mu.Lock()
	defer s.mu.Unlock()
	pl.MR = mr
	return pl
}

func pipelineRoutes() []*route {
	pl := "/projects/:id/pipelines/:pipeline_id"
	states := []string{"created", "waiting_for_resource", "preparing", "pending", "running", "success", "failed", "canceled", "skipped", "manual", "scheduled"}
	return []*route{
		{method: "GET", pattern: "/projects/:id/pipelines", handle: listPipelines,
			query: append([]string{"scope", "status", "source", "ref", "sha", "yaml_errors", "username", "updated_after", "updated_before", "created_after", "created_before", "order_by", "sort", "name"}, paging...),
			enums: map[string][]string{"status": states, "order_by": {"id", "status", "ref", "updated_at", "user_id"}, "sort": {"asc", "desc"}, "scope": {"running", "pending", "finished", "branches", "tags"}}},
		{method: "GET", pattern: pl, handle: getPipeline},
		{method: "GET", pattern: pl + "/test_report", handle: testReport},
		{method: "GET", pattern: pl + "/jobs", query: append([]string{"scope", "include_retried"}, paging...), handle: listJobs, enums: map[string][]string{"scope": states}},
		{method: "GET", pattern: "/projects/:id/jobs/:job_id/artifacts", query: []string{"job_token"}, handle: jobArtifacts},
		{method: "GET", pattern: "/projects/:id/jobs/:job_id/trace", handle: jobTrace},
	}
}

// pipelineInfo is a pipeline as GitLab lists it.
func (s *Server) pipelineInfo(p *Project, pl *Pipeline) map[string]any {
	return map[string]any{
		"id": pl.ID, "iid": pl.IID, "project_id": p.ID, "status": pl.Status, "source": pl.Source, "ref": pl.Ref, "sha": pl.SHA,
		"name": nil, "web_url": s.WebURL(p.Path) + "/-/pipelines/" + strconv.FormatInt(pl.ID, 10),
		"created_at": timeJSON(pl.CreatedAt), "updated_at": timeJSON(pl.FinishedAt),
	}
}

// pipelineJSON is a pipeline as GitLab answers it alone.
func (s *Server) pipelineJSON(p *Project, pl *Pipeline) map[string]any {
	m := s.pipelineInfo(p, pl)
	m["before_sha"] = pl.BeforeSHA
	m["tag"] = false
	m["yaml_errors"] = nil
	m["started_at"] = timeJSON(pl.CreatedAt)
	m["finished_at"] = timeJSON(pl.FinishedAt)
	m["committed_at"] = nil
	m["duration"] = int(pl.FinishedAt.Sub(pl.CreatedAt).Seconds())
	m["queued_duration"] = 0
	m["coverage"] = nil
	if pl.User != nil {
		m["user"] = s.basicUserJSON(pl.User)
	}
	m["detailed_status"] = map[string]any{"icon": "status_" + pl.Status, "text": pl.Status, "label": pl.Status, "group": pl.Status, "has_details": true}
	return m
}

// pipeline finds the call's pipeline. Lock held.
func (c *call) pipeline() *Pipeline {
	id, _ := strconv.ParseInt(c.params["pipeline_id"], 10, 64)
	for _, pl := range c.project.Pipelines {
		if pl.ID == id {
			return pl
		}
	}
	return nil
}

// listPipelines filters by ref, status, source and update time, newest
// first.
func listPipelines(s *Server, c *call) reply {
	var after time.Time
	if v := c.query.Get("updated_after"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			s.problems = append(s.problems, "GET pipelines: updated_after is not an ISO 8601 time: "+v)
			return apiError(http.StatusBadRequest, "400 Bad request - updated_after is invalid")
		}
		after = t
	}
	out := []map[string]any{}
	for i := len(c.project.Pipelines) - 1; i >= 0; i-- {
		pl := c.project.Pipelines[i]
		switch {
		case c.query.Get("ref") != "" && c.query.Get("ref") != pl.Ref,
			c.query.Get("status") != "" && c.query.Get("status") != pl.Status,
			c.query.Get("source") != "" && c.query.Get("source") != pl.Source,
			c.query.Get("sha") != "" && c.query.Get("sha") != pl.SHA,
			!after.IsZero() && pl.FinishedAt.Before(after):
			continue
		}
		out = append(out, s.pipelineInfo(c.project, pl))
	}
	return page(c, out)
}

func getPipeline(s *Server, c *call) reply {
	pl := c.pipeline()
	if pl == nil {
		return notFound("Pipeline")
	}
	return reply{status: http.StatusOK, body: s.pipelineJSON(c.project, pl)}
}

// jobJSON is a job as GitLab answers it.
func (s *Server) jobJSON(p *Project, pl *Pipeline, j *Job) map[string]any {
	arts := []map[string]any{}
	var file any
	if len(j.Files) > 0 {
		arts = append(arts, map[string]any{"file_type": "archive", "size": 1024, "filename": "artifacts.zip", "file_format": "zip"})
		file = map[string]any{"filename": "artifacts.zip", "size": 1024}
	}
	if len(j.JUnit) > 0 {
		arts = append(arts, map[string]any{"file_type": "junit", "size": len(j.JUnit), "filename": "junit.xml.gz", "file_format": "gzip"})
	}
	if j.Trace != "" {
		arts = append(arts, map[string]any{"file_type": "trace", "size": len(j.Trace), "filename": "job.log", "file_format": nil})
	}
	m := map[string]any{
		"id": j.ID, "status": j.Status, "stage": j.Stage, "name": j.Name, "ref": pl.Ref, "tag": false, "coverage": nil, "allow_failure": false,
		"created_at": timeJSON(pl.CreatedAt), "started_at": timeJSON(pl.CreatedAt), "finished_at": timeJSON(pl.FinishedAt),
		"duration": pl.FinishedAt.Sub(pl.CreatedAt).Seconds(), "queued_duration": 0.5, "failure_reason": nil,
		"commit":   map[string]any{"id": pl.SHA, "short_id": pl.SHA[:min(8, len(pl.SHA))], "title": "", "message": "", "parent_ids": []string{}},
		"pipeline": map[string]any{"id": pl.ID, "project_id": p.ID, "ref": pl.Ref, "sha": pl.SHA, "status": pl.Status},
		"web_url":  s.WebURL(p.Path) + "/-/jobs/" + strconv.FormatInt(j.ID, 10), "artifacts": arts, "tag_list": []string{},
		"artifacts_expire_at": nil,
	}
	if file != nil {
		m["artifacts_file"] = file
	}
	if j.Status == "failed" {
		m["failure_reason"] = "script_failure"
	}
	if pl.User != nil {
		m["user"] = s.basicUserJSON(pl.User)
	}
	return m
}

// listJobs answers a pipeline's jobs, those of the states scope[] names.
func listJobs(s *Server, c *call) reply {
	pl := c.pipeline()
	if pl == nil {
		return notFound("Pipeline")
	}
	scope := append(c.query["scope[]"], c.query["scope"]...)
	out := []map[string]any{}
	for _, j := range pl.Jobs {
		if len(scope) > 0 && !slices.Contains(scope, j.Status) {
			continue
		}
		out = append(out, s.jobJSON(c.project, pl, j))
	}
	return page(c, out)
}

// job finds the call's job and its pipeline. Lock held.
func (c *call) job() (*Pipeline, *Job) {
	id, _ := strconv.ParseInt(c.params["job_id"], 10, 64)
	for _, pl := range c.project.Pipelines {
		for _, j := range pl.Jobs {
			if j.ID == id {
				return pl, j
			}
		}
	}
	return nil, nil
}

// jobArtifacts answers a job's archive as a zip of its artifacts:paths.
func jobArtifacts(s *Server, c *call) reply {
	_, j := c.job()
	if j == nil || len(j.Files) == 0 {
		return notFound("")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(j.Files) {
		w, err := zw.Create(name)
		if err != nil {
			return apiError(http.StatusInternalServerError, err.Error())
		}
		_, _ = w.Write(j.Files[name])
	}
	if err := zw.Close(); err != nil {
		return apiError(http.StatusInternalServerError, err.Error())
	}
	return reply{status: http.StatusOK, raw: buf.Bytes(), header: http.Header{"Content-Type": {"application/zip"}, "Content-Disposition": {`attachment; filename="artifacts.zip"`}}}
}

// jobTrace answers a job's log as plain text.
func jobTrace(s *Server, c *call) reply {
	_, j := c.job()
	if j == nil {
		return notFound("Job")
	}
	return reply{status: http.StatusOK, raw: []byte(j.Trace), header: http.Header{"Content-Type": {"text/plain"}}}
}

// testReport answers the pipeline's test report: one suite per job that
// kept a JUnit report, named after the job, its cases as GitLab reads
// them from the report.
func testReport(s *Server, c *call) reply {
	pl := c.pipeline()
	if pl == nil {
		return notFound("Pipeline")
	}
	rep := map[string]any{}
	var suites []map[string]any
	totals := map[string]int{}
	for _, j := range pl.Jobs {
		if len(j.JUnit) == 0 {
			continue
		}
		cases, err := junitCases(j.JUnit)
		if err != nil {
			suites = append(suites, map[string]any{"name": j.Name, "total_time": 0, "total_count": 0, "success_count": 0, "failed_count": 0,
				"skipped_count": 0, "error_count": 0, "test_cases": []any{}, "suite_error": "JUnit XML parsing failed: " + err.Error()})
			continue
		}
		suite := map[string]any{"name": j.Name, "total_time": 0.0}
		counts := map[string]int{}
		var list []map[string]any
		for _, tc := range cases {
			counts[tc.status]++
			list = append(list, tc.json())
		}
		suite["test_cases"] = list
		suite["total_count"] = len(cases)
		for _, st := range []string{"success", "failed", "skipped", "error"} {
			suite[st+"_count"] = counts[st]
			totals[st] += counts[st]
		}
		totals["total"] += len(cases)
		suites = append(suites, suite)
	}
	if suites == nil {
		suites = []map[string]any{}
	}
	rep["total_time"] = 0.0
	rep["total_count"] = totals["total"]
	for _, st := range []string{"success", "failed", "skipped", "error"} {
		rep[st+"_count"] = totals[st]
	}
	rep["test_suites"] = suites
	return reply{status: http.StatusOK, body: rep}
}

// PipelineFor is the latest pipeline of the project at path at sha. Lock
// held.
func (s *Server) PipelineFor(path, sha string) *Pipeline {
	p, ok := s.Project(path)
	if !ok {
		return nil
	}
	for i := len(p.Pipelines) - 1; i >= 0; i-- {
		if strings.EqualFold(p.Pipelines[i].SHA, sha) {
			return p.Pipelines[i]
		}
	}
	return nil
}
