package gltest

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MergeRequest is a merge request and what was done to it.
type MergeRequest struct {
	ID, IID                   int64
	Title, Description        string
	Source, Target            string // branches
	State                     string // opened, closed, merged
	Author                    *User
	Labels                    []string
	Reviewers                 []int64
	RemoveSourceBranch        bool
	SHA, MergeCommitSHA       string
	Notes                     []*Note
	CreatedAt, UpdatedAt      time.Time
	MergedAt, ClosedAt        time.Time
	SourceProject, TargetProj int64
}

// Draft reports whether the title makes it a draft, as GitLab reads it.
func (mr *MergeRequest) Draft() bool { return draftTitle.MatchString(mr.Title) }

var draftTitle = regexp.MustCompile(`(?i)^\s*(\[draft\]|\(draft\)|draft:|draft\s\-\s|draft\s|\[wip\]|wip:)`)

// Note is a note in a merge request's thread.
type Note struct {
	ID        int64
	Body      string
	Author    *User
	System    bool
	CreatedAt time.Time
	// Awards are the emoji awarded to it, by whom.
	Awards []Award
	// Discussion is the thread a note of a discussion belongs to ("" for
	// a note standing alone); its notes are resolvable, and Resolved once
	// someone resolves the thread.
	Discussion string
	Resolved   bool
}

// kind is the note's type as GitLab answers it.
func (n *Note) kind() any {
	if n.Discussion == "" {
		return nil
	}
	return "DiscussionNote"
}

// Award is an emoji someone awarded.
type Award struct {
	ID   int64
	Name string
	User *User
}

func mergeRequestRoutes() []*route {
	mr := "/projects/:id/merge_requests/:iid"
	states := []string{"opened", "closed", "locked", "merged", "all"}
	return []*route{
		{method: "GET", pattern: "/projects/:id/merge_requests", handle: listMRs,
			query: append([]string{"state", "source_branch", "target_branch", "order_by", "sort", "iids", "labels", "search", "draft", "view"}, paging...),
			enums: map[string][]string{"state": states, "order_by": {"created_at", "updated_at", "merged_at", "title"}, "sort": {"asc", "desc"}}},
		{method: "POST", pattern: "/projects/:id/merge_requests", write: true, handle: createMR,
			body: []string{"title", "description", "source_branch", "target_branch", "labels", "assignee_id", "assignee_ids", "reviewer_ids", "target_project_id", "milestone_id", "remove_source_branch", "squash", "allow_collaboration"},
			need: []string{"title", "source_branch", "target_branch"}},
		{method: "GET", pattern: mr, query: []string{"render_html", "include_diverged_commits_count", "include_rebase_in_progress"}, handle: getMR},
		{method: "PUT", pattern: mr, write: true, handle: updateMR,
			body:  []string{"title", "description", "target_branch", "assignee_id", "assignee_ids", "reviewer_ids", "labels", "add_labels", "remove_labels", "milestone_id", "state_event", "remove_source_branch", "squash", "discussion_locked", "allow_collaboration"},
			enums: map[string][]string{"state_event": {"close", "reopen"}}},
		{method: "GET", pattern: mr + "/diffs", query: append([]string{"unidiff"}, paging...), handle: listDiffs},
		{method: "GET", pattern: mr + "/commits", query: paging, handle: listMRCommits},
		{method: "GET", pattern: mr + "/notes", query: append([]string{"sort", "order_by"}, paging...), handle: listNotes},
		{method: "POST", pattern: mr + "/notes", body: []string{"body", "internal", "created_at", "merge_request_diff_head_sha"}, need: []string{"body"}, handle: createNote},
		{method: "GET", pattern: mr + "/discussions/:discussion_id", handle: getDiscussion},
		{method: "POST", pattern: mr + "/notes/:note_id/award_emoji", body: []string{"name"}, need: []string{"name"}, handle: awardNote},
	}
}

// mr finds merge request iid of the call's project, its head read from
// its branch while it is open. Lock held.
func (c *call) mr() *MergeRequest {
	iid, err := strconv.ParseInt(c.params["iid"], 10, 64)
	if err != nil {
		return nil
	}
	for _, mr := range c.project.MRs {
		if mr.IID == iid {
			refresh(c.project, mr)
			return mr
		}
	}
	return nil
}

// refresh reads an open merge request's head from its branch, as GitLab
// follows pushes to it.
func refresh(p *Project, mr *MergeRequest) {
	if mr.State != "opened" || mr.SourceProject != p.ID {
		return // a fork's branch is the fork's
	}
	if h := headOf(p, mr.Source); h != "" {
		mr.SHA = h
	}
}

// mrJSON is a merge request as GitLab answers it.
func (s *Server) mrJSON(p *Project, mr *MergeRequest) map[string]any {
	reviewers := []map[string]any{}
	for _, id := range mr.Reviewers {
		if u := s.userByID(id); u != nil {
			reviewers = append(reviewers, s.basicUserJSON(u))
		}
	}
	labels := mr.Labels
	if labels == nil {
		labels = []string{}
	}
	var author any
	if mr.Author != nil {
		author = s.basicUserJSON(mr.Author)
	}
	ref := "!" + strconv.FormatInt(mr.IID, 10)
	return map[string]any{
		"id": mr.ID, "iid": mr.IID, "project_id": p.ID, "title": mr.Title, "description": mr.Description, "state": mr.State,
		"created_at": timeJSON(mr.CreatedAt), "updated_at": timeJSON(mr.UpdatedAt), "merged_at": timeJSON(mr.MergedAt), "closed_at": timeJSON(mr.ClosedAt),
		"target_branch": mr.Target, "source_branch": mr.Source, "source_project_id": mr.SourceProject, "target_project_id": mr.TargetProj,
		"author": author, "assignees": []any{}, "reviewers": reviewers, "labels": labels, "draft": mr.Draft(),
		"sha": mr.SHA, "merge_commit_sha": nilIfEmpty(mr.MergeCommitSHA), "squash_commit_sha": nil, "user_notes_count": len(mr.Notes),
		"should_remove_source_branch": mr.RemoveSourceBranch, "force_remove_source_branch": mr.RemoveSourceBranch,
		"detailed_merge_status": "mergeable", "has_conflicts": false, "blocking_discussions_resolved": true,
		"web_url":    s.WebURL(p.Path) + "/-/merge_requests/" + strconv.FormatInt(mr.IID, 10),
		"references": map[string]any{"short": ref, "relative": ref, "full": p.Path + ref},
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// listMRs filters by state and source branch, newest (or most recently
// updated) first.
func listMRs(s *Server, c *call) reply {
	var mrs []*MergeRequest
	for _, mr := range c.project.MRs {
		refresh(c.project, mr)
		if st := c.query.Get("state"); st != "" && st != "all" && st != mr.State {
			continue
		}
		if b := c.query.Get("source_branch"); b != "" && b != mr.Source {
			continue
		}
		if b := c.query.Get("target_branch"); b != "" && b != mr.Target {
			continue
		}
		mrs = append(mrs, mr)
	}
	by := func(mr *MergeRequest) time.Time { return mr.CreatedAt }
	if c.query.Get("order_by") == "updated_at" {
		by = func(mr *MergeRequest) time.Time { return mr.UpdatedAt }
	}
	slices.SortStableFunc(mrs, func(a, b *MergeRequest) int {
		d := by(b).Compare(by(a))
		if d == 0 {
			d = int(b.IID - a.IID)
		}
		if c.query.Get("sort") == "asc" {
			d = -d
		}
		return d
	})
	out := make([]map[string]any, 0, len(mrs))
	for _, mr := range mrs {
		out = append(out, s.mrJSON(c.project, mr))
	}
	return page(c, out)
}

// createMR opens a merge request from a branch of the project; GitLab
// refuses a second open one from the same branch (409).
func createMR(s *Server, c *call) reply {
	p := c.project
	src, dst := c.str("source_branch"), c.str("target_branch")
	if tp := c.str("target_project_id"); tp != "" && tp != strconv.FormatInt(p.ID, 10) {
		return apiError(http.StatusBadRequest, "target_project_id: forks are not served here")
	}
	for _, mr := range p.MRs {
		if mr.Source == src && mr.Target == dst && mr.State == "opened" {
			return reply{status: http.StatusConflict, body: map[string]any{"message": []string{fmt.Sprintf("Another open merge request already exists for this source branch: !%d", mr.IID)}}}
		}
	}
	head := headOf(p, src)
	if head == "" || headOf(p, dst) == "" {
		return reply{status: http.StatusBadRequest, body: map[string]any{"message": map[string]any{"source_branch": []string{"does not exist"}}}}
	}
	now := s.Now()
	mr := &MergeRequest{
		ID: s.id(), IID: int64(len(p.MRs) + 1), Title: c.str("title"), Description: c.str("description"), Source: src, Target: dst,
		State: "opened", Author: c.user, SHA: head, CreatedAt: now, UpdatedAt: now, SourceProject: p.ID, TargetProj: p.ID,
		RemoveSourceBranch: c.str("remove_source_branch") == "true",
	}
	mr.Labels = labelList(c.body["labels"])
	mr.Reviewers = idList(c.body["reviewer_ids"])
	p.MRs = append(p.MRs, mr)
	return reply{status: http.StatusCreated, body: s.mrJSON(p, mr)}
}

// labelList reads labels given as a comma-separated string or a list.
func labelList(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		for _, l := range strings.Split(x, ",") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	case []any:
		for _, l := range x {
			if s, ok := l.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// idList reads a list of ids.
func idList(v any) []int64 {
	var out []int64
	if xs, ok := v.([]any); ok {
		for _, x := range xs {
			if f, ok := x.(float64); ok {
				out = append(out, int64(f))
			}
		}
	}
	return out
}

func getMR(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	m := s.mrJSON(c.project, mr)
	m["work_in_progress"] = mr.Draft()
	m["diff_refs"] = map[string]any{"base_sha": headOf(c.project, mr.Target), "head_sha": mr.SHA, "start_sha": headOf(c.project, mr.Target)}
	return reply{status: http.StatusOK, body: m}
}

// updateMR closes or reopens, relabels, asks reviewers, retitles.
func updateMR(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	switch c.str("state_event") {
	case "close":
		if mr.State == "opened" {
			mr.State, mr.ClosedAt = "closed", s.Now()
		}
	case "reopen":
		if mr.State == "closed" {
			mr.State, mr.ClosedAt = "opened", time.Time{}
		}
	}
	if _, ok := c.body["labels"]; ok {
		mr.Labels = labelList(c.body["labels"])
	}
	for _, l := range labelList(c.body["add_labels"]) {
		if !slices.Contains(mr.Labels, l) {
			mr.Labels = append(mr.Labels, l)
		}
	}
	if _, ok := c.body["reviewer_ids"]; ok {
		mr.Reviewers = nil
		for _, id := range idList(c.body["reviewer_ids"]) {
			if s.userByID(id) != nil && !slices.Contains(mr.Reviewers, id) {
				mr.Reviewers = append(mr.Reviewers, id)
			}
		}
	}
	if t := c.str("title"); t != "" {
		mr.Title = t
	}
	if _, ok := c.body["description"]; ok {
		mr.Description = c.str("description")
	}
	mr.UpdatedAt = s.Now()
	return reply{status: http.StatusOK, body: s.mrJSON(c.project, mr)}
}

// listDiffs answers the files the merge request changes.
func listDiffs(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	out, err := gitCmd(c.project.Dir, "diff", "--name-status", "--no-renames", mr.Target+"..."+mr.SHA)
	if err != nil {
		return apiError(http.StatusInternalServerError, err.Error())
	}
	var diffs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		st, path, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		diffs = append(diffs, map[string]any{
			"old_path": path, "new_path": path, "a_mode": "100644", "b_mode": "100644", "diff": "",
			"new_file": st == "A", "renamed_file": false, "deleted_file": st == "D", "generated_file": false, "collapsed": false, "too_large": false,
		})
	}
	return page(c, diffs)
}

// listMRCommits answers the commits the merge request holds.
func listMRCommits(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	base := mr.Target
	if mr.State == "merged" {
		base = mr.SHA + "^1" // a merged request's commits are those it brought
	}
	out, _ := gitCmd(c.project.Dir, "rev-list", base+".."+mr.SHA)
	var commits []map[string]any
	for _, sha := range strings.Fields(out) {
		commits = append(commits, map[string]any{"id": sha, "short_id": sha[:8], "title": "", "message": "", "parent_ids": []string{}})
	}
	return page(c, commits)
}

// noteJSON is a note as GitLab answers it.
func (s *Server) noteJSON(p *Project, mr *MergeRequest, n *Note) map[string]any {
	return map[string]any{
		"id": n.ID, "type": n.kind(), "body": n.Body, "attachment": nil, "author": s.basicUserJSON(n.Author),
		"created_at": timeJSON(n.CreatedAt), "updated_at": timeJSON(n.CreatedAt), "system": n.System,
		"noteable_id": mr.ID, "noteable_type": "MergeRequest", "noteable_iid": mr.IID, "project_id": p.ID,
		"resolvable": n.Discussion != "", "resolved": n.Resolved, "confidential": false, "internal": false,
	}
}

// getDiscussion answers a thread of a merge request: its notes in order.
func getDiscussion(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	id := c.params["discussion_id"]
	notes := []map[string]any{}
	for _, n := range mr.Notes {
		if n.Discussion == id {
			notes = append(notes, s.noteJSON(c.project, mr, n))
		}
	}
	if id == "" || len(notes) == 0 {
		return notFound("Discussion")
	}
	return reply{status: http.StatusOK, body: map[string]any{"id": id, "individual_note": false, "notes": notes}}
}

func listNotes(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	out := []map[string]any{}
	for _, n := range mr.Notes {
		out = append(out, s.noteJSON(c.project, mr, n))
	}
	return page(c, out)
}

func createNote(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	if len([]rune(c.str("body"))) > 1_000_000 {
		return apiError(http.StatusBadRequest, "Note {:note=>[\"is too long (maximum is 1000000 characters)\"]}")
	}
	n := &Note{ID: s.id(), Body: c.str("body"), Author: c.user, CreatedAt: s.Now()}
	mr.Notes = append(mr.Notes, n)
	return reply{status: http.StatusCreated, body: s.noteJSON(c.project, mr, n)}
}

// awardNote awards an emoji to a note; the same emoji twice by one user
// is refused, as GitLab does.
func awardNote(s *Server, c *call) reply {
	mr := c.mr()
	if mr == nil {
		return notFound("Merge Request")
	}
	id, _ := strconv.ParseInt(c.params["note_id"], 10, 64)
	for _, n := range mr.Notes {
		if n.ID != id {
			continue
		}
		for _, a := range n.Awards {
			if a.Name == c.str("name") && a.User == c.user {
				return apiError(http.StatusNotFound, "404 Award Emoji Name has already been taken")
			}
		}
		a := Award{ID: s.id(), Name: c.str("name"), User: c.user}
		n.Awards = append(n.Awards, a)
		return reply{status: http.StatusCreated, body: map[string]any{
			"id": a.ID, "name": a.Name, "user": s.basicUserJSON(c.user), "created_at": timeJSON(s.Now()), "updated_at": timeJSON(s.Now()),
			"awardable_id": n.ID, "awardable_type": "Note",
		}}
	}
	return notFound("Note")
}

// MR finds merge request iid of the project at path. Lock held.
func (s *Server) MR(path string, iid int64) *MergeRequest {
	p, ok := s.Project(path)
	if !ok {
		return nil
	}
	for _, mr := range p.MRs {
		if mr.IID == iid {
			return mr
		}
	}
	return nil
}

// AddNote is u's note on merge request iid of the project at path, as
// written in GitLab's page. It takes the lock.
func (s *Server) AddNote(path string, iid int64, u *User, body string) *Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	mr := s.MR(path, iid)
	if mr == nil {
		s.t.Fatalf("gltest: no merge request !%d in %s", iid, path)
	}
	n := &Note{ID: s.id(), Body: body, Author: u, CreatedAt: s.Now()}
	mr.Notes = append(mr.Notes, n)
	return n
}

// AddThread is u's note starting a discussion thread (a resolvable one,
// as "Start a review" or a comment on the diff makes) on merge request iid
// of the project at path; to, when not nil, is the thread's note it
// replies to instead. It takes the lock.
func (s *Server) AddThread(path string, iid int64, u *User, body string, to *Note) *Note {
	n := s.AddNote(path, iid, u, body)
	s.mu.Lock()
	defer s.mu.Unlock()
	n.Discussion = fmt.Sprintf("%040x", n.ID)
	if to != nil {
		n.Discussion = to.Discussion
	}
	return n
}

// Resolve resolves the thread of note n on merge request iid of the
// project at path. It takes the lock.
func (s *Server) Resolve(path string, iid int64, n *Note) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.MR(path, iid).Notes {
		if m.Discussion == n.Discussion {
			m.Resolved = true
		}
	}
}

// Merge merges merge request iid of the project at path as u would: a
// merge commit on its target branch, its source branch removed when it
// asked to be. It takes the lock.
func (s *Server) Merge(path string, iid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _ := s.Project(path)
	mr := s.MR(path, iid)
	if mr == nil || mr.State != "opened" {
		s.t.Fatalf("gltest: no open merge request !%d in %s", iid, path)
	}
	tree, err := gitCmd(p.Dir, "merge-tree", "--write-tree", "refs/heads/"+mr.Target, mr.SHA)
	if err != nil {
		s.t.Fatalf("gltest: merge !%d: %v", iid, err)
	}
	target := headOf(p, mr.Target)
	commit, err := gitCmdEnv(p.Dir, []string{"GIT_AUTHOR_NAME=GitLab", "GIT_AUTHOR_EMAIL=gitlab@example.com", "GIT_COMMITTER_NAME=GitLab", "GIT_COMMITTER_EMAIL=gitlab@example.com"},
		"commit-tree", strings.TrimSpace(tree), "-p", target, "-p", mr.SHA, "-m", fmt.Sprintf("Merge branch '%s' into '%s'", mr.Source, mr.Target))
	if err != nil {
		s.t.Fatalf("gltest: merge !%d: %v", iid, err)
	}
	commit = strings.TrimSpace(commit)
	if _, err := gitCmd(p.Dir, "update-ref", "refs/heads/"+mr.Target, commit, target); err != nil {
		s.t.Fatalf("gltest: merge !%d: %v", iid, err)
	}
	if mr.RemoveSourceBranch {
		_, _ = gitCmd(p.Dir, "update-ref", "-d", "refs/heads/"+mr.Source)
	}
	now := s.Now()
	mr.State, mr.MergedAt, mr.UpdatedAt, mr.MergeCommitSHA = "merged", now, now, commit
}

// OpenForkMergeRequest records author's merge request from branch of the
// project at fork into the default branch of the project at path, as
// GitLab keeps one: in the target project, with the source branch's head
// fetched there as refs/merge-requests/IID/head. It takes the lock.
func (s *Server) OpenForkMergeRequest(path, fork, branch string, author *User) *MergeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.Project(path)
	f, fok := s.Project(fork)
	if !ok || !fok {
		s.t.Fatalf("gltest: no project %s or %s", path, fork)
	}
	sha := headOf(f, branch)
	if sha == "" {
		s.t.Fatalf("gltest: no branch %s in %s", branch, fork)
	}
	now := s.Now()
	mr := &MergeRequest{
		ID: s.id(), IID: int64(len(p.MRs) + 1), Title: "from " + fork, Source: branch, Target: p.DefaultBranch,
		State: "opened", Author: author, SHA: sha, CreatedAt: now, UpdatedAt: now, SourceProject: f.ID, TargetProj: p.ID,
	}
	ref := "refs/merge-requests/" + strconv.FormatInt(mr.IID, 10) + "/head"
	if out, err := gitCmd(p.Dir, "fetch", "-q", f.Dir, "refs/heads/"+branch+":"+ref); err != nil {
		s.t.Fatalf("gltest: fetch %s into %s: %v: %s", fork, path, err, out)
	}
	p.MRs = append(p.MRs, mr)
	return mr
}
