package ghtest

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// registerCore registers the endpoints of repositories, pull requests,
// labels, review requests, refs, commits and contents.
func (s *Server) registerCore() {
	s.handlers["GET /repos/{owner}/{repo}"] = s.getRepo
	s.handlers["GET /repos/{owner}/{repo}/pulls"] = s.listPulls
	s.handlers["POST /repos/{owner}/{repo}/pulls"] = s.createPull
	s.handlers["GET /repos/{owner}/{repo}/pulls/{pull_number}"] = s.getPull
	s.handlers["GET /repos/{owner}/{repo}/pulls/{pull_number}/files"] = s.listPullFiles
	s.handlers["POST /repos/{owner}/{repo}/issues/{issue_number}/labels"] = s.addLabels
	s.handlers["POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers"] = s.requestReviewers
	s.handlers["DELETE /repos/{owner}/{repo}/git/refs/{ref}"] = s.deleteRef
	s.handlers["GET /repos/{owner}/{repo}/commits/{ref}"] = s.getCommit
	s.handlers["GET /repos/{owner}/{repo}/contents/{path}"] = s.getContents
}

// ts is GitHub's timestamp format.
func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// userJSON fills a user object (from an example) for login. Lock held.
func (s *Server) userJSON(tmpl map[string]any, login string) map[string]any {
	u := clone(tmpl)
	id := int64(0)
	if usr := s.UserByLogin(login); usr != nil {
		id = usr.ID
	}
	u["login"] = login
	u["id"] = id
	u["type"] = "User"
	if strings.HasSuffix(login, "[bot]") {
		u["type"] = "Bot"
	}
	u["url"] = s.URL + APIPrefix + "/users/" + login
	u["html_url"] = s.URL + "/" + login
	return u
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if mm, ok := v.(map[string]any); ok {
			v = clone(mm)
		}
		out[k] = v
	}
	return out
}

// repoJSON fills a repository object for r. Lock held.
func (s *Server) repoJSON(tmpl map[string]any, r *Repo) map[string]any {
	o := clone(tmpl)
	o["id"] = r.ID
	o["name"] = r.Name
	o["full_name"] = r.FullName()
	o["private"] = r.Private
	o["default_branch"] = r.DefaultBranch
	// GitHub's own example lacks this required (nullable) field.
	o["language"] = "Go"
	if src, ok := o["source"].(map[string]any); ok {
		src["language"] = "Go"
	}
	if par, ok := o["parent"].(map[string]any); ok {
		par["language"] = "Go"
	}
	o["clone_url"] = s.CloneURL(r.Owner, r.Name)
	o["html_url"] = s.HTMLURL(r.Owner, r.Name)
	o["url"] = s.URL + APIPrefix + "/repos/" + r.FullName()
	if owner, ok := o["owner"].(map[string]any); ok {
		o["owner"] = s.userJSON(owner, r.Owner)
	}
	return o
}

func (s *Server) getRepo(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	return JSON(200, s.repoJSON(ex, repo))
}

// pullJSON fills a pull request object for p. Lock held.
func (s *Server) pullJSON(tmpl map[string]any, repo *Repo, p *Pull) map[string]any {
	o := clone(tmpl)
	api := s.URL + APIPrefix + "/repos/" + repo.FullName()
	o["id"] = p.ID
	o["number"] = p.Number
	o["url"] = fmt.Sprintf("%s/pulls/%d", api, p.Number)
	o["html_url"] = fmt.Sprintf("%s/pull/%d", s.HTMLURL(repo.Owner, repo.Name), p.Number)
	o["state"] = p.State
	o["title"] = p.Title
	o["body"] = p.Body
	o["draft"] = p.Draft
	o["locked"] = false
	o["created_at"] = ts(p.CreatedAt)
	o["updated_at"] = ts(p.UpdatedAt)
	o["closed_at"] = nil
	o["merged_at"] = nil
	o["merge_commit_sha"] = nil
	o["milestone"] = nil
	o["assignee"] = nil
	o["assignees"] = []any{}
	o["requested_teams"] = []any{}
	if p.State == "closed" {
		o["closed_at"] = ts(p.UpdatedAt)
	}
	if p.Merged {
		o["merged_at"] = ts(p.UpdatedAt)
	}
	userTmpl, _ := o["user"].(map[string]any)
	o["user"] = s.userJSON(userTmpl, p.User)
	var revs []any
	for _, l := range p.Reviewers {
		revs = append(revs, s.userJSON(userTmpl, l))
	}
	o["requested_reviewers"] = append([]any{}, revs...)
	labelTmpl := map[string]any{"id": 1, "node_id": "x", "url": "", "name": "", "description": nil, "color": "ededed", "default": false}
	if ls, ok := o["labels"].([]any); ok && len(ls) > 0 {
		if m, ok := ls[0].(map[string]any); ok {
			labelTmpl = m
		}
	}
	labels := []any{}
	for _, l := range p.Labels {
		lj := clone(labelTmpl)
		lj["name"] = l
		lj["url"] = api + "/labels/" + l
		labels = append(labels, lj)
	}
	o["labels"] = labels
	for side, ref := range map[string]string{"head": p.Head, "base": p.Base} {
		b, _ := o[side].(map[string]any)
		b = clone(b)
		b["ref"] = ref
		b["label"] = repo.Owner + ":" + ref
		sha := p.HeadSHA
		if side == "base" {
			if out, err := gitCmd(repo.Dir, "rev-parse", "refs/heads/"+ref); err == nil {
				sha = strings.TrimSpace(out)
			}
		}
		b["sha"] = sha
		if rj, ok := b["repo"].(map[string]any); ok {
			b["repo"] = s.repoJSON(rj, repo)
		}
		if uj, ok := b["user"].(map[string]any); ok {
			b["user"] = s.userJSON(uj, repo.Owner)
		}
		o[side] = b
	}
	if _, ok := o["merged"]; ok {
		o["merged"] = p.Merged
		o["mergeable"] = nil
		o["merged_by"] = nil
	}
	return o
}

func (s *Server) listPulls(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	exs, err := s.Desc.ExampleList("GET", r.Template, 200)
	if err != nil || len(exs) == 0 {
		return Error(500, fmt.Sprint("no example: ", err))
	}
	tmpl, _ := exs[0].(map[string]any)
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	head := q.Get("head") // "owner:branch"
	base := q.Get("base")
	out := []any{}
	for _, p := range repo.Pulls {
		if state != "all" && p.State != state {
			continue
		}
		if head != "" && !strings.EqualFold(head, repo.Owner+":"+p.Head) {
			continue
		}
		if base != "" && base != p.Base {
			continue
		}
		out = append(out, s.pullJSON(tmpl, repo, p))
	}
	return JSON(200, out)
}

// PullByHead finds the open pull request from branch. Lock held.
func (r *Repo) PullByHead(branch string) *Pull {
	for _, p := range r.Pulls {
		if p.State == "open" && p.Head == branch {
			return p
		}
	}
	return nil
}

func (s *Server) createPull(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	var in struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	if err := r.Decode(&in); err != nil {
		return Error(400, "Problems parsing JSON")
	}
	head := in.Head
	if o, b, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(o, repo.Owner) {
			return ValidationFailed("head must be a branch of this repository", "PullRequest", "head", "invalid")
		}
		head = b
	}
	if in.Title == "" {
		return ValidationFailed("title is missing", "PullRequest", "title", "missing_field")
	}
	if len([]rune(in.Body)) > 65536 {
		return ValidationFailed("body is too long (maximum is 65536 characters)", "Issue", "body", "custom")
	}
	sha, err := gitCmd(repo.Dir, "rev-parse", "--verify", "refs/heads/"+head)
	if err != nil {
		return ValidationFailed("head does not exist", "PullRequest", "head", "invalid")
	}
	if _, err := gitCmd(repo.Dir, "rev-parse", "--verify", "refs/heads/"+in.Base); err != nil {
		return ValidationFailed("base does not exist", "PullRequest", "base", "invalid")
	}
	if repo.PullByHead(head) != nil {
		return ValidationFailed(fmt.Sprintf("A pull request already exists for %s:%s.", repo.Owner, head), "PullRequest", "", "custom")
	}
	now := s.Now()
	p := &Pull{
		ID: s.NewID(), Number: s.nextNumber(repo), Title: in.Title, Body: in.Body,
		Head: head, Base: in.Base, HeadSHA: strings.TrimSpace(sha), Draft: in.Draft, State: "open",
		User: r.Auth.Login, CreatedAt: now, UpdatedAt: now,
	}
	repo.Pulls = append(repo.Pulls, p)
	ex, err := s.Desc.Example("POST", r.Template, 201)
	if err != nil {
		return Error(500, err.Error())
	}
	rep := JSON(201, s.pullJSON(ex, repo, p))
	rep.Header.Set("Location", fmt.Sprintf("%s%s/repos/%s/pulls/%d", s.URL, APIPrefix, repo.FullName(), p.Number))
	return rep
}

func (s *Server) nextNumber(repo *Repo) int {
	n := 0
	for _, p := range repo.Pulls {
		n = max(n, p.Number)
	}
	for _, i := range repo.Issues {
		n = max(n, i)
	}
	return n + 1
}

// AddIssue opens an issue (one that is not a pull request) on owner/name
// and returns its number. It takes the lock.
func (s *Server) AddIssue(owner, name string) int {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, ok := s.Repo(owner, name)
	if !ok {
		s.t.Fatalf("ghtest: no repository %s/%s", owner, name)
	}
	n := s.nextNumber(repo)
	repo.Issues = append(repo.Issues, n)
	return n
}

// pull finds the pull request a request names. Lock held.
func (s *Server) pull(r *Request, param string) (*Repo, *Pull, bool) {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return nil, nil, false
	}
	n, err := strconv.Atoi(r.Params[param])
	if err != nil {
		return nil, nil, false
	}
	for _, p := range repo.Pulls {
		if p.Number == n {
			return repo, p, true
		}
	}
	return nil, nil, false
}

func (s *Server) getPull(r *Request) Reply {
	repo, p, ok := s.pull(r, "pull_number")
	if !ok {
		return Error(404, "Not Found")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	return JSON(200, s.pullJSON(ex, repo, p))
}

// listPullFiles lists the files a pull request changes: its head against
// the merge base with its base branch, as GitHub computes them.
func (s *Server) listPullFiles(r *Request) Reply {
	repo, p, ok := s.pull(r, "pull_number")
	if !ok {
		return Error(404, "Not Found")
	}
	exs, err := s.Desc.ExampleList("GET", r.Template, 200)
	if err != nil || len(exs) == 0 {
		return Error(500, fmt.Sprint("no example: ", err))
	}
	tmpl, _ := exs[0].(map[string]any)
	out, err := gitCmd(repo.Dir, "diff", "--name-status", "--no-renames", "refs/heads/"+p.Base+"..."+p.HeadSHA)
	if err != nil {
		return Error(500, err.Error())
	}
	status := map[string]string{"A": "added", "D": "removed", "M": "modified"}
	files := []any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		st, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		f := clone(tmpl)
		f["filename"] = name
		f["status"] = status[st[:1]]
		if f["status"] == "" {
			f["status"] = "changed"
		}
		files = append(files, f)
	}
	return JSON(200, files)
}

func (s *Server) addLabels(r *Request) Reply {
	repo, p, ok := s.pull(r, "issue_number")
	if !ok {
		return Error(404, "Not Found")
	}
	var in struct {
		Labels []string `json:"labels"`
	}
	if err := r.Decode(&in); err != nil {
		// GitHub also takes a bare array of names.
		if err2 := r.Decode(&in.Labels); err2 != nil {
			return Error(400, "Problems parsing JSON")
		}
	}
	for _, l := range in.Labels {
		if !contains(p.Labels, l) {
			p.Labels = append(p.Labels, l)
		}
	}
	exs, err := s.Desc.ExampleList("POST", r.Template, 200)
	if err != nil || len(exs) == 0 {
		return Error(500, fmt.Sprint("no example: ", err))
	}
	tmpl, _ := exs[0].(map[string]any)
	out := []any{}
	for _, l := range p.Labels {
		lj := clone(tmpl)
		lj["name"] = l
		lj["url"] = s.URL + APIPrefix + "/repos/" + repo.FullName() + "/labels/" + l
		out = append(out, lj)
	}
	return JSON(200, out)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func (s *Server) requestReviewers(r *Request) Reply {
	repo, p, ok := s.pull(r, "pull_number")
	if !ok {
		return Error(404, "Not Found")
	}
	var in struct {
		Reviewers     []string `json:"reviewers"`
		TeamReviewers []string `json:"team_reviewers"`
	}
	if err := r.Decode(&in); err != nil {
		return Error(400, "Problems parsing JSON")
	}
	for _, l := range in.Reviewers {
		if strings.EqualFold(l, p.User) {
			return ValidationFailed("Review cannot be requested from pull request author.", "PullRequest", "reviewers", "custom")
		}
		if s.UserByLogin(l) == nil {
			return ValidationFailed("Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the "+repo.FullName()+" repository.", "PullRequest", "reviewers", "custom")
		}
	}
	for _, l := range in.Reviewers {
		if !contains(p.Reviewers, l) {
			p.Reviewers = append(p.Reviewers, l)
		}
	}
	for _, l := range in.TeamReviewers {
		if !contains(p.TeamReviewers, l) {
			p.TeamReviewers = append(p.TeamReviewers, l)
		}
	}
	ex, err := s.Desc.Example("POST", r.Template, 201)
	if err != nil {
		return Error(500, err.Error())
	}
	return JSON(201, s.pullJSON(ex, repo, p))
}

func (s *Server) deleteRef(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	ref := "refs/" + strings.TrimPrefix(r.Params["ref"], "refs/")
	if _, err := gitCmd(repo.Dir, "rev-parse", "--verify", ref); err != nil {
		return ValidationFailed("Reference does not exist", "Reference", "ref", "invalid")
	}
	if out, err := gitCmd(repo.Dir, "update-ref", "-d", ref); err != nil {
		return Error(500, out)
	}
	return Reply{Status: 204}
}

func (s *Server) getCommit(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	const sep = "\x1f"
	out, err := gitCmd(repo.Dir, "show", "-s", "--format=%H"+sep+"%an"+sep+"%ae"+sep+"%aI"+sep+"%B", r.Params["ref"]+"^{commit}")
	if err != nil {
		return ValidationFailed("No commit found for SHA: "+r.Params["ref"], "Commit", "sha", "invalid")
	}
	f := strings.SplitN(out, sep, 5)
	if len(f) < 5 {
		return Error(500, "unexpected git output")
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	ex["sha"] = f[0]
	ex["url"] = s.URL + APIPrefix + "/repos/" + repo.FullName() + "/commits/" + f[0]
	ex["html_url"] = s.HTMLURL(repo.Owner, repo.Name) + "/commit/" + f[0]
	if c, ok := ex["commit"].(map[string]any); ok {
		c = clone(c)
		c["message"] = strings.TrimSpace(f[4])
		for _, k := range []string{"author", "committer"} {
			if a, ok := c[k].(map[string]any); ok {
				a = clone(a)
				a["name"], a["email"], a["date"] = f[1], f[2], f[3]
				c[k] = a
			}
		}
		ex["commit"] = c
	}
	tmpl, _ := ex["author"].(map[string]any)
	if u := s.UserByEmail(f[2]); u != nil && tmpl != nil {
		ex["author"] = s.userJSON(tmpl, u.Login)
		ex["committer"] = s.userJSON(tmpl, u.Login)
	} else {
		ex["author"] = nil
		ex["committer"] = nil
	}
	ex["files"] = []any{}
	return JSON(200, ex)
}

func (s *Server) getContents(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = "refs/heads/" + repo.DefaultBranch
	}
	path := strings.TrimPrefix(r.Params["path"], "/")
	data, err := gitCmd(repo.Dir, "cat-file", "blob", ref+":"+path)
	if err != nil {
		return Error(404, "Not Found")
	}
	blob, _ := gitCmd(repo.Dir, "rev-parse", ref+":"+path)
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	name := path[strings.LastIndex(path, "/")+1:]
	ex["type"] = "file"
	ex["encoding"] = "base64"
	ex["size"] = len(data)
	ex["name"] = name
	ex["path"] = path
	ex["sha"] = strings.TrimSpace(blob)
	ex["content"] = base64.StdEncoding.EncodeToString([]byte(data))
	return JSON(200, ex)
}
