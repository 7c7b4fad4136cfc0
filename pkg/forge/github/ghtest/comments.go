package ghtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Comment is a comment on an issue or pull request of the test GitHub.
type Comment struct {
	ID        int64
	Number    int // the issue's or pull request's
	User      string
	Body      string
	Reactions []string // their contents ("+1", "eyes", …), in order
}

// commentState is the comments and collaborators of every repository, in
// Server.Ext under commentsKey.
type commentState struct {
	comments map[string][]*Comment        // by repository full name, lower case
	perms    map[string]map[string]string // repository → login → role
}

const commentsKey = "comments"

// comments is the server's comment state. Lock held.
func (s *Server) comments() *commentState {
	st, ok := s.Ext[commentsKey].(*commentState)
	if !ok {
		st = &commentState{comments: map[string][]*Comment{}, perms: map[string]map[string]string{}}
		s.Ext[commentsKey] = st
	}
	return st
}

// registerComments registers the endpoints of issue and pull request
// comments, their reactions, collaborators' permissions and the update of
// a pull request (closing it).
func (s *Server) registerComments() {
	s.handlers["GET /repos/{owner}/{repo}/issues/{issue_number}/comments"] = s.listComments
	s.handlers["POST /repos/{owner}/{repo}/issues/{issue_number}/comments"] = s.createComment
	s.handlers["POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"] = s.createReaction
	s.handlers["GET /repos/{owner}/{repo}/collaborators/{username}/permission"] = s.getPermission
	s.handlers["PATCH /repos/{owner}/{repo}/pulls/{pull_number}"] = s.updatePull
}

// SetRole gives login a role on owner/name: "admin", "maintain", "write",
// "triage" or "read" (a user with none is not a collaborator). It takes
// the lock.
func (s *Server) SetRole(owner, name, login, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(owner + "/" + name)
	st := s.comments()
	if st.perms[key] == nil {
		st.perms[key] = map[string]string{}
	}
	st.perms[key][strings.ToLower(login)] = role
}

// Comments are the comments on issue or pull request number of
// owner/name, oldest first (copies). It takes the lock.
func (s *Server) Comments(owner, name string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments().comments[strings.ToLower(owner+"/"+name)] {
		if c.Number == number {
			cp := *c
			cp.Reactions = append([]string(nil), c.Reactions...)
			out = append(out, cp)
		}
	}
	return out
}

// AddComment puts a comment by login on issue or pull request number of
// owner/name, as a person writing it on GitHub would (the test then
// delivers its webhook). It takes the lock.
func (s *Server) AddComment(owner, name string, number int, login, body string) Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Comment{ID: s.NewID(), Number: number, User: login, Body: body}
	key := strings.ToLower(owner + "/" + name)
	s.comments().comments[key] = append(s.comments().comments[key], c)
	return *c
}

// CommentJSON is comment c on owner/name as the API and webhooks carry it.
// It takes the lock.
func (s *Server) CommentJSON(owner, name string, c Comment) map[string]any {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, ok := s.Repo(owner, name)
	if !ok {
		s.t.Fatalf("ghtest: no repository %s/%s", owner, name)
	}
	ex, err := s.Desc.Example("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 201)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.commentJSON(ex, repo, &c)
}

// commentJSON fills an issue comment object. Lock held.
func (s *Server) commentJSON(tmpl map[string]any, repo *Repo, c *Comment) map[string]any {
	o := clone(tmpl)
	api := s.URL + APIPrefix + "/repos/" + repo.FullName()
	kind := "issues"
	if _, p := s.pullNumbered(repo, c.Number); p != nil {
		kind = "pull"
	}
	o["id"] = c.ID
	o["body"] = c.Body
	o["url"] = fmt.Sprintf("%s/issues/comments/%d", api, c.ID)
	o["html_url"] = fmt.Sprintf("%s/%s/%d#issuecomment-%d", s.HTMLURL(repo.Owner, repo.Name), kind, c.Number, c.ID)
	o["issue_url"] = fmt.Sprintf("%s/issues/%d", api, c.Number)
	o["author_association"] = "NONE"
	now := ts(s.Now())
	o["created_at"], o["updated_at"] = now, now
	userTmpl, _ := o["user"].(map[string]any)
	o["user"] = s.userJSON(userTmpl, c.User)
	return o
}

// pullNumbered finds pull request n. Lock held.
func (s *Server) pullNumbered(repo *Repo, n int) (*Repo, *Pull) {
	for _, p := range repo.Pulls {
		if p.Number == n {
			return repo, p
		}
	}
	return repo, nil
}

// issueOf finds the repository and checks that the issue number a request
// names exists (a pull request, or an issue of AddIssue). Lock held.
func (s *Server) issueOf(r *Request) (*Repo, int, bool) {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return nil, 0, false
	}
	n, err := strconv.Atoi(r.Params["issue_number"])
	if err != nil {
		return nil, 0, false
	}
	if _, p := s.pullNumbered(repo, n); p == nil && !slices.Contains(repo.Issues, n) {
		return nil, 0, false
	}
	return repo, n, true
}

func (s *Server) listComments(r *Request) Reply {
	repo, n, ok := s.issueOf(r)
	if !ok {
		return Error(404, "Not Found")
	}
	exs, err := s.Desc.ExampleList("GET", r.Template, 200)
	if err != nil || len(exs) == 0 {
		return Error(500, fmt.Sprint("no example: ", err))
	}
	tmpl, _ := exs[0].(map[string]any)
	out := []any{}
	for _, c := range s.comments().comments[strings.ToLower(repo.FullName())] {
		if c.Number == n {
			out = append(out, s.commentJSON(tmpl, repo, c))
		}
	}
	return JSON(200, out)
}

func (s *Server) createComment(r *Request) Reply {
	repo, n, ok := s.issueOf(r)
	if !ok {
		return Error(404, "Not Found")
	}
	var in struct {
		Body *string `json:"body"`
	}
	if err := r.Decode(&in); err != nil {
		return Error(400, "Problems parsing JSON")
	}
	if in.Body == nil || strings.TrimSpace(*in.Body) == "" {
		return ValidationFailed("body is missing", "IssueComment", "body", "missing_field")
	}
	if len([]rune(*in.Body)) > 65536 {
		return ValidationFailed("body is too long (maximum is 65536 characters)", "IssueComment", "body", "custom")
	}
	c := &Comment{ID: s.NewID(), Number: n, User: r.Auth.Login, Body: *in.Body}
	key := strings.ToLower(repo.FullName())
	s.comments().comments[key] = append(s.comments().comments[key], c)
	ex, err := s.Desc.Example("POST", r.Template, 201)
	if err != nil {
		return Error(500, err.Error())
	}
	body := s.commentJSON(ex, repo, c)
	rep := JSON(201, body)
	rep.Header.Set("Location", body["url"].(string))
	return rep
}

func (s *Server) createReaction(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	id, err := strconv.ParseInt(r.Params["comment_id"], 10, 64)
	if err != nil {
		return Error(404, "Not Found")
	}
	var c *Comment
	for _, x := range s.comments().comments[strings.ToLower(repo.FullName())] {
		if x.ID == id {
			c = x
		}
	}
	if c == nil {
		return Error(404, "Not Found")
	}
	var in struct {
		Content string `json:"content"`
	}
	if err := r.Decode(&in); err != nil {
		return Error(400, "Problems parsing JSON")
	}
	status := 201
	if contains(c.Reactions, in.Content) {
		status = 200 // GitHub answers 200 with the reaction that exists
	} else {
		c.Reactions = append(c.Reactions, in.Content)
	}
	ex, err := s.Desc.Example("POST", r.Template, status)
	if err != nil {
		return Error(500, err.Error())
	}
	ex["id"] = s.NewID()
	ex["content"] = in.Content
	ex["created_at"] = ts(s.Now())
	if u, ok := ex["user"].(map[string]any); ok {
		ex["user"] = s.userJSON(u, r.Auth.Login)
	}
	return JSON(status, ex)
}

// legacyLevel is GitHub's base permission of a role: maintain is write,
// triage is read.
func legacyLevel(role string) string {
	switch role {
	case "admin", "write", "read", "none":
		return role
	case "maintain":
		return "write"
	case "triage":
		return "read"
	}
	return "read" // a custom role is built on one of the base roles
}

func (s *Server) getPermission(r *Request) Reply {
	repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])
	if !ok {
		return Error(404, "Not Found")
	}
	login := r.Params["username"]
	u := s.UserByLogin(login)
	if u == nil {
		return Error(404, "Not Found")
	}
	role := s.comments().perms[strings.ToLower(repo.FullName())][strings.ToLower(login)]
	switch {
	case role != "":
	case strings.EqualFold(login, repo.Owner):
		role = "admin"
	case repo.Private:
		role = "none"
	default:
		role = "read" // anyone may read a public repository
	}
	ex, err := s.Desc.Example("GET", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	ex["permission"] = legacyLevel(role)
	ex["role_name"] = role
	if ut, ok := ex["user"].(map[string]any); ok {
		uj := s.userJSON(ut, u.Login)
		if perms, ok := uj["permissions"].(map[string]any); ok {
			lvl := legacyLevel(role)
			perms["admin"] = lvl == "admin"
			perms["maintain"] = role == "maintain" || lvl == "admin"
			perms["push"] = lvl == "write" || lvl == "admin"
			perms["triage"] = lvl != "none"
			perms["pull"] = lvl != "none"
		}
		uj["role_name"] = role
		ex["user"] = uj
	}
	return JSON(200, ex)
}

// updatePull changes a pull request's title, body or state.
func (s *Server) updatePull(r *Request) Reply {
	repo, p, ok := s.pull(r, "pull_number")
	if !ok {
		return Error(404, "Not Found")
	}
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
	}
	if err := r.Decode(&in); err != nil {
		return Error(400, "Problems parsing JSON")
	}
	if in.Title != nil {
		if *in.Title == "" {
			return ValidationFailed("title is missing", "PullRequest", "title", "missing_field")
		}
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	if in.State != nil && *in.State != p.State {
		if p.Merged {
			return ValidationFailed("Cannot change the state of a merged pull request", "PullRequest", "state", "custom")
		}
		p.State = *in.State
	}
	p.UpdatedAt = s.Now()
	ex, err := s.Desc.Example("PATCH", r.Template, 200)
	if err != nil {
		return Error(500, err.Error())
	}
	return JSON(200, s.pullJSON(ex, repo, p))
}
