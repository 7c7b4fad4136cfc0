package ghtest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WorkflowRun is a GitHub Actions run of a repository of the test GitHub.
type WorkflowRun struct {
	ID, WorkflowID int64
	Name           string // the workflow's name
	HeadBranch     string
	HeadSHA        string
	// HeadRepo is the repository ("owner/name", on this server) holding
	// the head commit: a fork, for a pull request's run from one; the
	// run's repository when empty.
	HeadRepo   string
	Event      string // "push" when empty
	Status     string // "completed" when empty
	Conclusion string // "success", "failure", …
	RunAttempt int    // 1 when 0
	CreatedAt  time.Time
	Jobs       []*Job
	Artifacts  []*Artifact
}

// Job is one job of a run, with its log as Actions stores it.
type Job struct {
	ID         int64
	Name       string
	Conclusion string
	Log        []byte
}

// Artifact is a file a run uploaded, stored as the zip GitHub serves.
type Artifact struct {
	ID      int64
	Name    string
	Zip     []byte
	Expired bool
}

// HookDelivery is one delivery of the App's webhook, as GitHub records it.
type HookDelivery struct {
	ID          int64
	GUID        string
	Event       string
	Action      string
	StatusCode  int // the receiver's answer; 0 when it could not be reached
	Redelivery  bool
	DeliveredAt time.Time
}

// Zip is a zip archive of files (name → content), as artifacts come.
func Zip(files map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.Create(n)
		if err == nil {
			_, _ = w.Write(files[n])
		}
	}
	_ = zw.Close()
	return b.Bytes()
}

// actions is the Actions and hook-delivery state, in Server.Ext.
type actions struct {
	runs         map[string][]*WorkflowRun // by lower-case "owner/repo"
	deliveries   []*HookDelivery
	redelivered  []int64
	storage      *httptest.Server // where downloads redirect to: another host
	blobs        map[string][]byte
	storageCalls []http.Header
}

const actionsKey = "actions"

// registerActions registers the Actions endpoints and the App's hook
// deliveries, and starts the storage host that downloads redirect to.
func (s *Server) registerActions() {
	a := &actions{runs: map[string][]*WorkflowRun{}, blobs: map[string][]byte{}}
	a.storage = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.mu.Lock()
		a.storageCalls = append(a.storageCalls, req.Header.Clone())
		blob, ok := a.blobs[req.URL.Path]
		sig := req.URL.Query().Get("sig")
		s.mu.Unlock()
		if !ok || sig == "" {
			http.Error(w, "BlobNotFound", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(blob)
	}))
	s.t.Cleanup(a.storage.Close)
	s.Ext[actionsKey] = a
	s.handlers["GET /repos/{owner}/{repo}/actions/runs/{run_id}"] = s.getRun
	s.handlers["GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs"] = s.listJobs
	s.handlers["GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"] = s.listArtifacts
	s.handlers["GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"] = s.downloadArtifact
	s.handlers["GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"] = s.jobLogs
	s.handlers["GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"] = s.listWorkflowRuns
	s.handlers["GET /repos/{owner}/{repo}/actions/runs"] = s.listWorkflowRuns
	s.handlers["GET /app/hook/deliveries"] = s.listHookDeliveries
	s.handlers["POST /app/hook/deliveries/{delivery_id}/attempts"] = s.redeliver
}

func (s *Server) actions() *actions { return s.Ext[actionsKey].(*actions) }

// AddRun adds a run to owner/repo, filling its ids and defaults, and
// returns it. It takes the lock.
func (s *Server) AddRun(owner, repo string, run WorkflowRun) *WorkflowRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := run
	if r.ID == 0 {
		r.ID = s.NewID()
	}
	if r.WorkflowID == 0 {
		r.WorkflowID = 161335
	}
	if r.Event == "" {
		r.Event = "push"
	}
	if r.Status == "" {
		r.Status = "completed"
	}
	if r.RunAttempt == 0 {
		r.RunAttempt = 1
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = s.Now()
	}
	for _, j := range r.Jobs {
		if j.ID == 0 {
			j.ID = s.NewID()
		}
	}
	for _, ar := range r.Artifacts {
		if ar.ID == 0 {
			ar.ID = s.NewID()
		}
	}
	a := s.actions()
	key := strings.ToLower(owner + "/" + repo)
	a.runs[key] = append(a.runs[key], &r)
	return &r
}

// RunJSON is the run as the API and the workflow_run webhook carry it. It
// takes the lock.
func (s *Server) RunJSON(owner, repo string, id int64) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, ok := s.Repo(owner, repo)
	run := s.findRun(owner, repo, id)
	if !ok || run == nil {
		return nil, fmt.Errorf("no run %d in %s/%s", id, owner, repo)
	}
	return s.runJSON(rp, run)
}

// StorageRequests are the headers of the requests the storage host got
// (artifact and log downloads). It takes the lock.
func (s *Server) StorageRequests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.actions().storageCalls...)
}

// AddHookDelivery records a delivery of the App's webhook. It takes the lock.
func (s *Server) AddHookDelivery(d HookDelivery) *HookDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.ID == 0 {
		d.ID = s.NewID()
	}
	if d.DeliveredAt.IsZero() {
		d.DeliveredAt = s.Now()
	}
	a := s.actions()
	a.deliveries = append(a.deliveries, &d)
	return &d
}

// Redelivered are the ids of the deliveries redfix asked to redeliver. It
// takes the lock.
func (s *Server) Redelivered() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.actions().redelivered...)
}

// findRun finds a run. Lock held.
func (s *Server) findRun(owner, repo string, id int64) *WorkflowRun {
	for _, r := range s.actions().runs[strings.ToLower(owner+"/"+repo)] {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// runJSON fills a run object. Lock held.
func (s *Server) runJSON(rp *Repo, r *WorkflowRun) (map[string]any, error) {
	ex, err := s.Desc.Example("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", 200)
	if err != nil {
		return nil, err
	}
	api := s.URL + APIPrefix + "/repos/" + rp.FullName()
	ex["id"] = r.ID
	ex["name"] = r.Name
	ex["workflow_id"] = r.WorkflowID
	ex["head_branch"] = r.HeadBranch
	ex["head_sha"] = r.HeadSHA
	ex["event"] = r.Event
	ex["status"] = r.Status
	ex["conclusion"] = r.Conclusion
	if r.Conclusion == "" {
		ex["conclusion"] = nil
	}
	ex["run_attempt"] = r.RunAttempt
	ex["created_at"] = ts(r.CreatedAt)
	ex["updated_at"] = ts(r.CreatedAt)
	ex["run_started_at"] = ts(r.CreatedAt)
	ex["pull_requests"] = []any{}
	ex["url"] = fmt.Sprintf("%s/actions/runs/%d", api, r.ID)
	ex["html_url"] = fmt.Sprintf("%s/actions/runs/%d", s.HTMLURL(rp.Owner, rp.Name), r.ID)
	ex["jobs_url"] = fmt.Sprintf("%s/actions/runs/%d/jobs", api, r.ID)
	ex["logs_url"] = fmt.Sprintf("%s/actions/runs/%d/logs", api, r.ID)
	ex["artifacts_url"] = fmt.Sprintf("%s/actions/runs/%d/artifacts", api, r.ID)
	ex["workflow_url"] = fmt.Sprintf("%s/actions/workflows/%d", api, r.WorkflowID)
	if hc, ok := ex["head_commit"].(map[string]any); ok {
		hc["id"] = r.HeadSHA
	}
	if repo, ok := ex["repository"].(map[string]any); ok {
		ex["repository"] = s.repoJSON(repo, rp)
	}
	if repo, ok := ex["head_repository"].(map[string]any); ok {
		head := rp
		if r.HeadRepo != "" {
			owner, name, _ := strings.Cut(r.HeadRepo, "/")
			if head, ok = s.Repo(owner, name); !ok {
				return nil, fmt.Errorf("no head repository %s", r.HeadRepo)
			}
		}
		ex["head_repository"] = s.repoJSON(repo, head)
	}
	return ex, nil
}

func (s *Server) runOf(r *Request) (*Repo, *WorkflowRun, bool) {
	rp, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return nil, nil, false
	}
	id, err := strconv.ParseInt(r.Params["run_id"], 10, 64)
	if err != nil {
		return nil, nil, false
	}
	run := s.findRun(rp.Owner, rp.Name, id)
	return rp, run, run != nil
}

func (s *Server) getRun(r *Request) Reply {
	rp, run, ok := s.runOf(r)
	if !ok {
		return Error(404, "Not Found")
	}
	body, err := s.runJSON(rp, run)
	if err != nil {
		return Error(500, err.Error())
	}
	return JSON(200, body)
}

// page cuts a list as per_page and page ask; 30 a page by default.
func page[T any](r *Request, all []T) []T {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if p <= 0 {
		p = 1
	}
	lo := min((p-1)*per, len(all))
	hi := min(lo+per, len(all))
	return all[lo:hi]
}

func (s *Server) listJobs(r *Request) Reply {
	rp, run, ok := s.runOf(r)
	if !ok {
		return Error(404, "Not Found")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	tmpl := map[string]any{}
	if js, ok := ex["jobs"].([]any); ok && len(js) > 0 {
		tmpl, _ = js[0].(map[string]any)
	}
	api := s.URL + APIPrefix + "/repos/" + rp.FullName()
	var jobs []any
	for _, j := range page(r, run.Jobs) {
		o := clone(tmpl)
		o["id"] = j.ID
		o["run_id"] = run.ID
		o["name"] = j.Name
		o["status"] = "completed"
		o["conclusion"] = j.Conclusion
		o["head_sha"] = run.HeadSHA
		o["head_branch"] = run.HeadBranch
		o["run_attempt"] = run.RunAttempt
		o["workflow_name"] = run.Name
		o["url"] = fmt.Sprintf("%s/actions/jobs/%d", api, j.ID)
		o["run_url"] = fmt.Sprintf("%s/actions/runs/%d", api, run.ID)
		o["html_url"] = fmt.Sprintf("%s/actions/runs/%d/job/%d", s.HTMLURL(rp.Owner, rp.Name), run.ID, j.ID)
		o["steps"] = []any{}
		o["created_at"] = ts(run.CreatedAt)
		o["started_at"] = ts(run.CreatedAt)
		o["completed_at"] = ts(run.CreatedAt.Add(time.Minute))
		jobs = append(jobs, o)
	}
	if jobs == nil {
		jobs = []any{}
	}
	return JSON(200, map[string]any{"total_count": len(run.Jobs), "jobs": jobs})
}

func (s *Server) listArtifacts(r *Request) Reply {
	rp, run, ok := s.runOf(r)
	if !ok {
		return Error(404, "Not Found")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	tmpl := map[string]any{}
	if as, ok := ex["artifacts"].([]any); ok && len(as) > 0 {
		tmpl, _ = as[0].(map[string]any)
	}
	api := s.URL + APIPrefix + "/repos/" + rp.FullName()
	var arts []any
	for _, a := range page(r, run.Artifacts) {
		o := clone(tmpl)
		o["id"] = a.ID
		o["name"] = a.Name
		o["size_in_bytes"] = len(a.Zip)
		o["expired"] = a.Expired
		o["url"] = fmt.Sprintf("%s/actions/artifacts/%d", api, a.ID)
		o["archive_download_url"] = fmt.Sprintf("%s/actions/artifacts/%d/zip", api, a.ID)
		if wr, ok := o["workflow_run"].(map[string]any); ok {
			wr["id"] = run.ID
			wr["head_sha"] = run.HeadSHA
			wr["head_branch"] = run.HeadBranch
		}
		arts = append(arts, o)
	}
	if arts == nil {
		arts = []any{}
	}
	return JSON(200, map[string]any{"total_count": len(run.Artifacts), "artifacts": arts})
}

// redirect stores blob on the storage host under a fresh signed URL and
// answers 302 to it, as GitHub does for downloads. Lock held.
func (s *Server) redirect(blob []byte) Reply {
	a := s.actions()
	path := "/blobs/" + s.mintToken("")
	a.blobs[path] = blob
	return Reply{Status: 302, Header: http.Header{"Location": {a.storage.URL + path + "?sig=" + s.mintToken("")}}}
}

func (s *Server) downloadArtifact(r *Request) Reply {
	rp, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok || r.Params["archive_format"] != "zip" {
		return Error(404, "Not Found")
	}
	id, _ := strconv.ParseInt(r.Params["artifact_id"], 10, 64)
	for _, run := range s.actions().runs[strings.ToLower(rp.FullName())] {
		for _, a := range run.Artifacts {
			if a.ID == id {
				if a.Expired {
					return Error(410, "Artifact has expired")
				}
				return s.redirect(a.Zip)
			}
		}
	}
	return Error(404, "Not Found")
}

func (s *Server) jobLogs(r *Request) Reply {
	rp, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	id, _ := strconv.ParseInt(r.Params["job_id"], 10, 64)
	for _, run := range s.actions().runs[strings.ToLower(rp.FullName())] {
		for _, j := range run.Jobs {
			if j.ID == id {
				return s.redirect(j.Log)
			}
		}
	}
	return Error(404, "Not Found")
}

// listWorkflowRuns lists a repository's runs, or one workflow's, newest
// first, filtered by branch, event, status (or conclusion) and created
// (">=DATE" only).
func (s *Server) listWorkflowRuns(r *Request) Reply {
	rp, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	q := r.URL.Query()
	var wf int64
	if w := r.Params["workflow_id"]; w != "" {
		var err error
		if wf, err = strconv.ParseInt(w, 10, 64); err != nil {
			return Error(404, "Not Found")
		}
	}
	var since time.Time
	if c := q.Get("created"); strings.HasPrefix(c, ">=") {
		since, _ = time.Parse(time.RFC3339, strings.TrimPrefix(c, ">="))
		if since.IsZero() {
			since, _ = time.Parse("2006-01-02", strings.TrimPrefix(c, ">="))
		}
	}
	var match []*WorkflowRun
	for _, run := range s.actions().runs[strings.ToLower(rp.FullName())] {
		switch {
		case wf != 0 && run.WorkflowID != wf,
			q.Get("branch") != "" && run.HeadBranch != q.Get("branch"),
			q.Get("event") != "" && run.Event != q.Get("event"),
			q.Get("status") != "" && run.Status != q.Get("status") && run.Conclusion != q.Get("status"),
			!since.IsZero() && run.CreatedAt.Before(since):
			continue
		}
		match = append(match, run)
	}
	sort.SliceStable(match, func(i, j int) bool { return match[i].CreatedAt.After(match[j].CreatedAt) })
	runs := []any{}
	for _, run := range page(r, match) {
		o, err := s.runJSON(rp, run)
		if err != nil {
			return Error(500, err.Error())
		}
		runs = append(runs, o)
	}
	return JSON(200, map[string]any{"total_count": len(match), "workflow_runs": runs})
}

// listHookDeliveries lists the App's deliveries, newest first, one page.
func (s *Server) listHookDeliveries(r *Request) Reply {
	ex, err := s.Desc.ExampleList("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	tmpl := map[string]any{}
	if len(ex) > 0 {
		tmpl, _ = ex[0].(map[string]any)
	}
	ds := append([]*HookDelivery(nil), s.actions().deliveries...)
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].DeliveredAt.After(ds[j].DeliveredAt) })
	out := []any{}
	for _, d := range page(r, ds) {
		o := clone(tmpl)
		o["id"] = d.ID
		o["guid"] = d.GUID
		o["event"] = d.Event
		o["action"] = d.Action
		o["status_code"] = d.StatusCode
		o["status"] = "OK"
		if d.StatusCode < 200 || d.StatusCode > 299 {
			o["status"] = "Invalid HTTP Response: " + strconv.Itoa(d.StatusCode)
		}
		o["redelivery"] = d.Redelivery
		o["delivered_at"] = ts(d.DeliveredAt)
		out = append(out, o)
	}
	return JSON(200, out)
}

func (s *Server) redeliver(r *Request) Reply {
	id, err := strconv.ParseInt(r.Params["delivery_id"], 10, 64)
	if err != nil {
		return Error(404, "Not Found")
	}
	a := s.actions()
	for _, d := range a.deliveries {
		if d.ID == id {
			a.redelivered = append(a.redelivered, id)
			return JSON(202, map[string]any{})
		}
	}
	return Error(404, "Not Found")
}
