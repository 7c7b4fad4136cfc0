package ghtest

import (
	"fmt"
	"strconv"
	"strings"
)

// CheckRun is a check run on a commit of a repository of the test GitHub.
type CheckRun struct {
	ID         int64
	Name       string
	HeadSHA    string
	Status     string // "queued", "in_progress" or "completed"
	Conclusion string // set when completed
	Title      string
	Summary    string
	Text       string
	DetailsURL string
	ExternalID string
	// Creator is who made it (the App's installation or a user).
	Creator Identity
	// Updates counts the PATCHes it received.
	Updates int
}

// checks is the check-run state, in Server.Ext.
type checks struct {
	runs map[string][]*CheckRun // by lower-case "owner/repo", in creation order
}

const checksKey = "checks"

// registerChecks registers the endpoints of check runs.
func (s *Server) registerChecks() {
	s.Ext[checksKey] = &checks{runs: map[string][]*CheckRun{}}
	s.handlers["POST /repos/{owner}/{repo}/check-runs"] = s.createCheckRun
	s.handlers["PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"] = s.updateCheckRun
	s.handlers["GET /repos/{owner}/{repo}/commits/{ref}/check-runs"] = s.listCheckRunsForRef
}

func (s *Server) checks() *checks { return s.Ext[checksKey].(*checks) }

// CheckRuns are the check runs of owner/repo, in creation order (copies).
// It takes the lock.
func (s *Server) CheckRuns(owner, repo string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, c := range s.checks().runs[strings.ToLower(owner+"/"+repo)] {
		out = append(out, *c)
	}
	return out
}

// checkRunInput is the body of a create or update, as GitHub describes it.
type checkRunInput struct {
	Name       *string `json:"name"`
	HeadSHA    string  `json:"head_sha"`
	DetailsURL *string `json:"details_url"`
	ExternalID *string `json:"external_id"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	Output     *struct {
		Title   string `json:"title"`
		Summary string `json:"summary"`
		Text    string `json:"text"`
	} `json:"output"`
}

// apply sets c from in, as GitHub does: a conclusion completes the run.
func (in checkRunInput) apply(c *CheckRun) Reply {
	if in.Name != nil {
		if *in.Name == "" {
			return ValidationFailed("name cannot be blank", "CheckRun", "name", "missing_field")
		}
		c.Name = *in.Name
	}
	if in.DetailsURL != nil {
		c.DetailsURL = *in.DetailsURL
	}
	if in.ExternalID != nil {
		c.ExternalID = *in.ExternalID
	}
	if in.Status != nil {
		c.Status = *in.Status
	}
	if in.Conclusion != nil {
		c.Conclusion = *in.Conclusion
		c.Status = "completed"
	}
	if c.Status == "completed" && c.Conclusion == "" {
		return ValidationFailed("conclusion is required when status is completed", "CheckRun", "conclusion", "missing_field")
	}
	if c.Status != "completed" {
		c.Conclusion = ""
	}
	if in.Output != nil {
		c.Title, c.Summary, c.Text = in.Output.Title, in.Output.Summary, in.Output.Text
	}
	return Reply{}
}

// canWriteChecks says who may write check runs: GitHub gives them to Apps
// (an installation token) and refuses users' tokens.
func canWriteChecks(id Identity) bool { return id.Kind == "installation" }

func (s *Server) createCheckRun(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	if !canWriteChecks(r.Auth) && !s.checksForUsers() {
		return Error(403, "You must authenticate via a GitHub App.")
	}
	var in checkRunInput
	if err := r.Decode(&in); err != nil {
		return Error(400, "Problems parsing JSON")
	}
	if _, err := gitCmd(repo.Dir, "cat-file", "-e", in.HeadSHA+"^{commit}"); err != nil {
		return ValidationFailed("No commit found for SHA: "+in.HeadSHA, "CheckRun", "head_sha", "invalid")
	}
	c := &CheckRun{ID: s.NewID(), HeadSHA: in.HeadSHA, Status: "queued", Creator: r.Auth}
	if rep := in.apply(c); rep.Status != 0 {
		return rep
	}
	key := strings.ToLower(repo.FullName())
	s.checks().runs[key] = append(s.checks().runs[key], c)
	return s.checkRunReply(201, r, repo, c)
}

func (s *Server) updateCheckRun(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	if !canWriteChecks(r.Auth) && !s.checksForUsers() {
		return Error(403, "You must authenticate via a GitHub App.")
	}
	id, err := strconv.ParseInt(r.Params["check_run_id"], 10, 64)
	if err != nil {
		return Error(404, "Not Found")
	}
	var c *CheckRun
	for _, cr := range s.checks().runs[strings.ToLower(repo.FullName())] {
		if cr.ID == id {
			c = cr
		}
	}
	if c == nil {
		return Error(404, "Not Found")
	}
	var in checkRunInput
	if err := r.Decode(&in); err != nil {
		return Error(400, "Problems parsing JSON")
	}
	next := *c
	if rep := in.apply(&next); rep.Status != 0 {
		return rep
	}
	next.Updates++
	*c = next
	return s.checkRunReply(200, r, repo, c)
}

func (s *Server) listCheckRunsForRef(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	ref := r.Params["ref"]
	sha := ref
	if out, err := gitCmd(repo.Dir, "rev-parse", "--verify", "-q", ref+"^{commit}"); err == nil {
		sha = strings.TrimSpace(out)
	} else {
		return ValidationFailed("No commit found for SHA: "+ref, "Commit", "ref", "invalid")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	q := r.URL.Query()
	name, status, filter := q.Get("check_name"), q.Get("status"), q.Get("filter")
	all := s.checks().runs[strings.ToLower(repo.FullName())]
	var picked []*CheckRun
	seen := map[string]bool{}
	// Newest first; "latest" (the default) keeps the newest of each name.
	for i := len(all) - 1; i >= 0; i-- {
		c := all[i]
		if c.HeadSHA != sha || (name != "" && c.Name != name) || (status != "" && c.Status != status) {
			continue
		}
		if filter != "all" && seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		picked = append(picked, c)
	}
	perPage, page := 30, 1
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	runs := []any{}
	from := (page - 1) * perPage
	for i := from; i < len(picked) && i < from+perPage; i++ {
		runs = append(runs, s.checkRunJSON(r, repo, picked[i]))
	}
	out := clone(ex)
	out["total_count"] = len(picked)
	out["check_runs"] = runs
	rep := JSON(200, out)
	if from+perPage < len(picked) {
		next := *r.URL
		qq := next.Query()
		qq.Set("page", strconv.Itoa(page+1))
		next.RawQuery = qq.Encode()
		rep.Header.Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, s.URL, next.RequestURI()))
	}
	return rep
}

// checkRunReply answers with c as GitHub's check-run object.
func (s *Server) checkRunReply(status int, r *Request, repo *Repo, c *CheckRun) Reply {
	return JSON(status, s.checkRunJSON(r, repo, c))
}

// checkRunJSON fills a check-run object (from the create example) for c.
// Lock held.
func (s *Server) checkRunJSON(r *Request, repo *Repo, c *CheckRun) map[string]any {
	ex, err := s.Desc.Example("POST", "/repos/{owner}/{repo}/check-runs", 201)
	if err != nil {
		s.t.Errorf("ghtest: no check-run example: %v", err)
		ex = map[string]any{}
	}
	o := clone(ex)
	api := s.URL + APIPrefix + "/repos/" + repo.FullName()
	o["id"] = c.ID
	o["node_id"] = fmt.Sprintf("CR_%d", c.ID)
	o["name"] = c.Name
	o["head_sha"] = c.HeadSHA
	o["url"] = fmt.Sprintf("%s/check-runs/%d", api, c.ID)
	o["html_url"] = fmt.Sprintf("%s/runs/%d", s.HTMLURL(repo.Owner, repo.Name), c.ID)
	o["details_url"] = c.DetailsURL
	o["external_id"] = c.ExternalID
	o["status"] = c.Status
	o["started_at"] = ts(s.Now())
	if c.Status == "completed" {
		o["conclusion"] = c.Conclusion
		o["completed_at"] = ts(s.Now())
	} else {
		o["conclusion"] = nil
		o["completed_at"] = nil
	}
	var title, summary, text any
	if c.Title != "" || c.Summary != "" {
		title, summary = c.Title, c.Summary
	}
	if c.Text != "" {
		text = c.Text
	}
	o["output"] = map[string]any{
		"title": title, "summary": summary, "text": text, "annotations_count": 0,
		"annotations_url": fmt.Sprintf("%s/check-runs/%d/annotations", api, c.ID),
	}
	o["pull_requests"] = []any{}
	return o
}

// checksForUsers is whether users' tokens may write check runs too (tests
// that run redfix with a plain token); GitHub itself does not allow it.
// Lock held.
func (s *Server) checksForUsers() bool {
	v, _ := s.Ext[checksUsersKey].(bool)
	return v
}

const checksUsersKey = "checks.users"

// AllowUserChecks lets plain user tokens write check runs, which GitHub
// refuses (only Apps may): for end-to-end tests that run redfix with a
// token. It takes the lock.
func (s *Server) AllowUserChecks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Ext[checksUsersKey] = true
}
