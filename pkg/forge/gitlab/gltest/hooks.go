package gltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The X-Gitlab-Event names of the hooks the test GitLab sends.
const (
	PipelineHook     = "Pipeline Hook"
	MergeRequestHook = "Merge Request Hook"
	NoteHook         = "Note Hook"
)

// hookTime is how GitLab writes times in pipeline and note hooks.
func hookTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// hookUser is the user part of a hook.
func (s *Server) hookUser(u *User) map[string]any {
	return map[string]any{"id": u.ID, "name": u.Name, "username": u.Username, "avatar_url": "", "email": "[REDACTED]"}
}

// hookProject is the project part of a hook.
func (s *Server) hookProject(p *Project) map[string]any {
	host := strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://")
	return map[string]any{
		"id": p.ID, "name": p.Name(), "description": "", "web_url": s.WebURL(p.Path), "avatar_url": nil,
		"git_ssh_url": "git@" + host + ":" + p.Path + ".git", "git_http_url": s.CloneURL(p.Path),
		"namespace": p.Namespace(), "visibility_level": 0, "path_with_namespace": p.Path, "default_branch": p.DefaultBranch,
		"ci_config_path": "", "homepage": s.WebURL(p.Path), "url": "git@" + host + ":" + p.Path + ".git",
		"ssh_url": "git@" + host + ":" + p.Path + ".git", "http_url": s.CloneURL(p.Path),
	}
}

// hookCommit is a commit as hooks show it.
func (s *Server) hookCommit(p *Project, sha string) map[string]any {
	out, _ := gitCmd(p.Dir, "log", "-1", "--format=%s%x00%B%x00%aI%x00%an%x00%ae", sha, "--")
	f := strings.SplitN(strings.TrimRight(out, "\n"), "\x00", 5)
	for len(f) < 5 {
		f = append(f, "")
	}
	return map[string]any{
		"id": sha, "message": f[1], "title": f[0], "timestamp": f[2], "url": s.WebURL(p.Path) + "/-/commit/" + sha,
		"author": map[string]any{"name": f[3], "email": f[4]},
	}
}

// PipelinePayload is the Pipeline Hook GitLab sends when pl finishes. It
// takes the lock.
func (s *Server) PipelinePayload(path string, pl *Pipeline) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _ := s.Project(path)
	var builds []map[string]any
	for _, j := range pl.Jobs {
		b := map[string]any{
			"id": j.ID, "stage": j.Stage, "name": j.Name, "status": j.Status, "created_at": hookTime(pl.CreatedAt),
			"started_at": hookTime(pl.CreatedAt), "finished_at": hookTime(pl.FinishedAt), "duration": pl.FinishedAt.Sub(pl.CreatedAt).Seconds(),
			"queued_duration": 0.5, "failure_reason": nil, "when": "on_success", "manual": false, "allow_failure": false,
			"user": s.hookUser(pl.User), "runner": nil, "environment": nil,
			"artifacts_file": map[string]any{"filename": nil, "size": nil},
		}
		if j.Status == "failed" {
			b["failure_reason"] = "script_failure"
		}
		if len(j.Files) > 0 {
			b["artifacts_file"] = map[string]any{"filename": "artifacts.zip", "size": 1024}
		}
		builds = append(builds, b)
	}
	var mr any
	if pl.MR != nil {
		mr = map[string]any{
			"id": pl.MR.ID, "iid": pl.MR.IID, "title": pl.MR.Title, "source_branch": pl.MR.Source, "source_project_id": pl.MR.SourceProject,
			"target_branch": pl.MR.Target, "target_project_id": pl.MR.TargetProj, "state": pl.MR.State, "merge_status": "can_be_merged",
			"detailed_merge_status": "mergeable", "url": s.WebURL(p.Path) + "/-/merge_requests/" + strconv.FormatInt(pl.MR.IID, 10),
		}
	}
	return marshal(map[string]any{
		"object_kind": "pipeline",
		"object_attributes": map[string]any{
			"id": pl.ID, "iid": pl.IID, "name": nil, "ref": pl.Ref, "tag": false, "sha": pl.SHA, "before_sha": pl.BeforeSHA, "source": pl.Source,
			"status": pl.Status, "detailed_status": pl.Status, "stages": []string{"test"}, "created_at": hookTime(pl.CreatedAt),
			"finished_at": hookTime(pl.FinishedAt), "duration": int(pl.FinishedAt.Sub(pl.CreatedAt).Seconds()), "queued_duration": 1,
			"variables": []any{}, "url": s.WebURL(p.Path) + "/-/pipelines/" + strconv.FormatInt(pl.ID, 10),
		},
		"merge_request": mr, "user": s.hookUser(pl.User), "project": s.hookProject(p), "commit": s.hookCommit(p, pl.SHA),
		"builds": builds,
	})
}

// hookMR is a merge request's attributes as hooks show them.
func (s *Server) hookMR(p *Project, mr *MergeRequest) map[string]any {
	state := map[string]int{"opened": 1, "closed": 2, "merged": 3, "locked": 4}[mr.State]
	labels := []any{}
	for i, l := range mr.Labels {
		labels = append(labels, map[string]any{"id": int64(i + 1), "title": l, "color": "#428BCA", "project_id": p.ID, "created_at": hookTime(mr.CreatedAt),
			"updated_at": hookTime(mr.CreatedAt), "template": false, "description": "", "type": "ProjectLabel", "group_id": nil})
	}
	reviewers := mr.Reviewers
	if reviewers == nil {
		reviewers = []int64{}
	}
	return map[string]any{
		"id": mr.ID, "iid": mr.IID, "target_branch": mr.Target, "source_branch": mr.Source, "source_project_id": mr.SourceProject,
		"target_project_id": mr.TargetProj, "author_id": mr.Author.ID, "assignee_ids": []int64{}, "assignee_id": nil, "reviewer_ids": reviewers,
		"title": mr.Title, "description": mr.Description, "created_at": hookTime(mr.CreatedAt), "updated_at": hookTime(mr.UpdatedAt),
		"milestone_id": nil, "state_id": state, "state": mr.State, "merge_status": "can_be_merged", "detailed_merge_status": "mergeable",
		"work_in_progress": mr.Draft(), "draft": mr.Draft(), "blocking_discussions_resolved": true, "first_contribution": false,
		"merge_commit_sha": nilIfEmpty(mr.MergeCommitSHA), "url": s.WebURL(p.Path) + "/-/merge_requests/" + strconv.FormatInt(mr.IID, 10),
		"source": s.hookProject(p), "target": s.hookProject(p), "last_commit": s.hookCommit(p, mr.SHA), "labels": labels,
		"total_time_spent": 0, "time_change": 0, "human_total_time_spent": nil, "human_time_change": nil, "human_time_estimate": nil,
	}
}

// MergeRequestPayload is the Merge Request Hook GitLab sends when by acts
// on merge request iid (action: open, update, close, reopen, merge, …). It
// takes the lock.
func (s *Server) MergeRequestPayload(path string, iid int64, action string, by *User) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _ := s.Project(path)
	mr := s.MR(path, iid)
	attrs := s.hookMR(p, mr)
	attrs["action"] = action
	return marshal(map[string]any{
		"object_kind": "merge_request", "event_type": "merge_request", "user": s.hookUser(by), "project": s.hookProject(p),
		"repository":        map[string]any{"name": p.Name(), "url": s.CloneURL(p.Path), "description": "", "homepage": s.WebURL(p.Path)},
		"object_attributes": attrs, "labels": attrs["labels"], "changes": map[string]any{}, "assignees": []any{}, "reviewers": []any{},
	})
}

// NotePayload is the Note Hook GitLab sends for note n on merge request
// iid. It takes the lock.
func (s *Server) NotePayload(path string, iid int64, n *Note) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _ := s.Project(path)
	mr := s.MR(path, iid)
	mrAttrs := s.hookMR(p, mr)
	for _, k := range []string{"draft", "first_contribution", "state_id", "human_total_time_spent", "human_time_change", "human_time_estimate", "time_change", "blocking_discussions_resolved"} {
		delete(mrAttrs, k)
	}
	return marshal(map[string]any{
		"object_kind": "note", "event_type": "note", "user": s.hookUser(n.Author), "project_id": p.ID, "project": s.hookProject(p),
		"repository": map[string]any{"name": p.Name(), "url": s.CloneURL(p.Path), "description": "", "homepage": s.WebURL(p.Path)},
		"object_attributes": map[string]any{
			"id": n.ID, "note": n.Body, "noteable_type": "MergeRequest", "author_id": n.Author.ID, "created_at": hookTime(n.CreatedAt),
			"updated_at": hookTime(n.CreatedAt), "project_id": p.ID, "attachment": nil, "line_code": nil, "commit_id": "", "noteable_id": mr.ID,
			"system": n.System, "st_diff": nil, "action": "create", "type": n.kind(), "discussion_id": discussionOf(n),
			"url": s.WebURL(p.Path) + "/-/merge_requests/" + strconv.FormatInt(mr.IID, 10) + "#note_" + strconv.FormatInt(n.ID, 10),
		},
		"merge_request": mrAttrs,
	})
}

func marshal(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// Delivery is one webhook delivery: the event's name, its payload, and
// its identity (GitLab's X-Gitlab-Event-UUID, also its Idempotency-Key).
type Delivery struct {
	Event   string
	Payload []byte
	UUID    string
}

// Deliver posts d to url as the instance does, with secret as
// X-Gitlab-Token, and returns the answer's status and body.
func (s *Server) Deliver(url, secret string, d Delivery) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitLab/18.6.0")
	req.Header.Set("X-Gitlab-Event", d.Event)
	req.Header.Set("X-Gitlab-Event-UUID", d.UUID)
	req.Header.Set("X-Gitlab-Webhook-UUID", "5d4a6f0e-0000-4000-8000-00000000b00c")
	req.Header.Set("X-Gitlab-Instance", s.URL)
	req.Header.Set("Idempotency-Key", d.UUID)
	if secret != "" {
		req.Header.Set("X-Gitlab-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// discussionOf is the thread a note hook names: its discussion's, or for a
// note standing alone a thread of its own.
func discussionOf(n *Note) string {
	if n.Discussion != "" {
		return n.Discussion
	}
	return fmt.Sprintf("%040x", n.ID)
}
