package gltest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Status is a commit status an external system set.
type Status struct {
	ID                     int64
	SHA, Ref, Name, State  string
	Description, TargetURL string
	Author                 *User
	CreatedAt, FinishedAt  time.Time
}

// statusStates are the states a status can be set to.
var statusStates = []string{"pending", "running", "success", "failed", "canceled", "skipped"}

func statusRoutes() []*route {
	return []*route{
		{method: "GET", pattern: "/projects/:id/repository/commits/:sha/statuses", handle: listStatuses,
			query: append([]string{"ref", "stage", "name", "pipeline_id", "all", "order_by", "sort"}, paging...)},
		{method: "POST", pattern: "/projects/:id/statuses/:sha", write: true, handle: setStatus,
			body: []string{"state", "ref", "name", "context", "target_url", "description", "coverage", "pipeline_id"}, need: []string{"state"},
			enums: map[string][]string{"state": statusStates}},
	}
}

func (s *Server) statusJSON(st *Status) map[string]any {
	return map[string]any{
		"id": st.ID, "sha": st.SHA, "ref": st.Ref, "status": st.State, "name": st.Name, "description": nilIfEmpty(st.Description),
		"target_url": nilIfEmpty(st.TargetURL), "created_at": timeJSON(st.CreatedAt), "started_at": timeJSON(st.CreatedAt),
		"finished_at": timeJSON(st.FinishedAt), "allow_failure": false, "coverage": nil,
		"author": map[string]any{"id": st.Author.ID, "username": st.Author.Username, "name": st.Author.Name, "state": "active"},
	}
}

// listStatuses answers a commit's statuses: the latest of each name, or
// all of them with all=true.
func listStatuses(s *Server, c *call) reply {
	all := c.query.Get("all") == "true"
	seen := map[string]bool{}
	out := []map[string]any{}
	for i := len(c.project.Statuses) - 1; i >= 0; i-- {
		st := c.project.Statuses[i]
		if !strings.EqualFold(st.SHA, c.params["sha"]) || c.query.Get("name") != "" && c.query.Get("name") != st.Name ||
			c.query.Get("ref") != "" && c.query.Get("ref") != st.Ref {
			continue
		}
		if !all && seen[st.Name] {
			continue
		}
		seen[st.Name] = true
		out = append(out, s.statusJSON(st))
	}
	return page(c, out)
}

// setStatus sets a status as GitLab does: a status of the same name and
// ref still pending or running moves to the new state (one that cannot,
// pending to pending or running to running, is refused with 400); else a
// new status is made.
func setStatus(s *Server, c *call) reply {
	sha := c.params["sha"]
	if _, err := gitCmd(c.project.Dir, "cat-file", "-e", sha+"^{commit}"); err != nil {
		return notFound("Commit")
	}
	name := c.str("name")
	if name == "" {
		name = c.str("context")
	}
	if name == "" {
		name = "default"
	}
	if len([]rune(c.str("description"))) > 255 {
		return apiError(http.StatusBadRequest, "400 Bad request - description is too long (maximum is 255 characters)")
	}
	if len(c.str("target_url")) > 255 {
		return apiError(http.StatusBadRequest, "400 Bad request - target_url is too long (maximum is 255 characters)")
	}
	ref := c.str("ref")
	if ref == "" {
		ref = c.project.DefaultBranch
	}
	state := c.str("state")
	var st *Status
	for _, x := range c.project.Statuses {
		if x.SHA == sha && x.Name == name && x.Ref == ref && (x.State == "pending" || x.State == "running") {
			st = x
		}
	}
	if st != nil && st.State == state {
		return apiError(http.StatusBadRequest, fmt.Sprintf("Cannot transition status via :%s from :%s", verbOf(state), state))
	}
	if st == nil {
		st = &Status{ID: s.id(), SHA: sha, Ref: ref, Name: name, Author: c.user, CreatedAt: s.Now()}
		c.project.Statuses = append(c.project.Statuses, st)
	}
	st.State, st.Description, st.TargetURL = state, c.str("description"), c.str("target_url")
	if state != "pending" && state != "running" {
		st.FinishedAt = s.Now()
	}
	return reply{status: http.StatusCreated, body: s.statusJSON(st)}
}

// verbOf is the transition GitLab names in its refusal.
func verbOf(state string) string {
	switch state {
	case "pending":
		return "enqueue"
	case "running":
		return "run"
	}
	return state
}

// StatusesOf are the statuses set on sha of the project at path, oldest
// first. It takes the lock.
func (s *Server) StatusesOf(path, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.Project(path)
	if !ok {
		return nil
	}
	var out []Status
	for _, st := range p.Statuses {
		if st.SHA == sha {
			out = append(out, *st)
		}
	}
	return out
}
