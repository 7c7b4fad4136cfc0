package gltest

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Project is a project: its repository and what GitLab keeps beside it.
type Project struct {
	ID            int64
	Path          string // full path, "acme/payments/ledger"
	DefaultBranch string
	// Dir is the bare repository.
	Dir       string
	Members   map[int64]int
	MRs       []*MergeRequest
	Pipelines []*Pipeline
	Statuses  []*Status
	CreatedAt time.Time
}

// Name is the project's own name, the last part of its path.
func (p *Project) Name() string { return p.Path[strings.LastIndex(p.Path, "/")+1:] }

// Namespace is the path of the group that holds it.
func (p *Project) Namespace() string { return p.Path[:max(strings.LastIndex(p.Path, "/"), 0)] }

// CreateProject makes the project at path (a namespace and a name, groups
// nesting) from the local repository at from (its branches and tags). It
// takes the lock.
func (s *Server) CreateProject(path, from string) *Project {
	s.t.Helper()
	dir := filepath.Join(s.gitDir, filepath.FromSlash(path)+".git")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if out, err := gitCmd("", "clone", "-q", "--bare", from, dir); err != nil {
		s.t.Fatalf("gltest: create %s: %v: %s", path, err, out)
	}
	if out, err := gitCmd(dir, "config", "http.receivepack", "true"); err != nil {
		s.t.Fatalf("gltest: %v: %s", err, out)
	}
	head, err := gitCmd(dir, "symbolic-ref", "--short", "HEAD")
	if err != nil {
		s.t.Fatalf("gltest: default branch of %s: %v", from, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &Project{ID: s.id(), Path: path, DefaultBranch: strings.TrimSpace(head), Dir: dir, Members: map[int64]int{}, CreatedAt: s.Now()}
	s.projects[strings.ToLower(path)] = p
	return p
}

// Project finds the project at path. Lock held.
func (s *Server) Project(path string) (*Project, bool) {
	p, ok := s.projects[strings.ToLower(path)]
	return p, ok
}

// WebURL is the page of the project at path.
func (s *Server) WebURL(path string) string { return s.URL + "/" + path }

// CloneURL is where git reaches the project at path.
func (s *Server) CloneURL(path string) string { return s.WebURL(path) + ".git" }

// RepoDir is the bare repository of the project at path ("" when there
// is none). It takes the lock.
func (s *Server) RepoDir(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.Project(path); ok {
		return p.Dir
	}
	return ""
}

// Git runs git in the bare repository of the project at path (to read
// what was pushed). It takes the lock.
func (s *Server) Git(path string, args ...string) (string, error) {
	s.mu.Lock()
	p, ok := s.Project(path)
	s.mu.Unlock()
	if !ok {
		return "", os.ErrNotExist
	}
	return gitCmd(p.Dir, args...)
}

func projectRoutes() []*route {
	return []*route{
		{method: "GET", pattern: "/projects/:id", query: []string{"statistics", "license", "with_custom_attributes"}, handle: getProject},
		{method: "GET", pattern: "/user", handle: currentUser},
		{method: "GET", pattern: "/users", query: append([]string{"username", "search", "active", "humans", "exclude_internal", "without_project_bots"}, paging...), handle: listUsers},
		{method: "GET", pattern: "/users/:user_id", handle: getUser},
		{method: "GET", pattern: "/projects/:id/members/all/:user_id", handle: getInheritedMember},
		{method: "GET", pattern: "/projects/:id/repository/commits/:sha", query: []string{"stats"}, handle: getCommit},
		{method: "DELETE", pattern: "/projects/:id/repository/branches/:branch", write: true, handle: deleteBranch},
	}
}

// projectJSON is a project as GitLab answers it.
func (s *Server) projectJSON(p *Project) map[string]any {
	ns := p.Namespace()
	return map[string]any{
		"id": p.ID, "description": "", "name": p.Name(), "name_with_namespace": strings.ReplaceAll(p.Path, "/", " / "),
		"path": p.Name(), "path_with_namespace": p.Path, "created_at": timeJSON(p.CreatedAt), "default_branch": p.DefaultBranch,
		"ssh_url_to_repo":  "git@" + strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://") + ":" + p.Path + ".git",
		"http_url_to_repo": s.CloneURL(p.Path), "web_url": s.WebURL(p.Path), "visibility": "private",
		"archived": false, "empty_repo": false, "topics": []string{},
		"namespace": map[string]any{
			"id": p.ID + 1_000_000, "name": ns[strings.LastIndex(ns, "/")+1:], "path": ns[strings.LastIndex(ns, "/")+1:],
			"kind": "group", "full_path": ns, "web_url": s.URL + "/groups/" + ns,
		},
	}
}

func getProject(s *Server, c *call) reply {
	return reply{status: http.StatusOK, body: s.projectJSON(c.project)}
}

// basicUserJSON is an account as GitLab shows it to anyone.
func (s *Server) basicUserJSON(u *User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Username, "name": u.Name, "state": "active", "avatar_url": "", "web_url": s.URL + "/" + u.Username}
}

// userJSON is an account's public profile.
func (s *Server) userJSON(u *User) map[string]any {
	m := s.basicUserJSON(u)
	m["public_email"] = u.PublicEmail
	m["bot"] = u.Bot
	m["created_at"] = timeJSON(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	return m
}

func currentUser(s *Server, c *call) reply {
	m := s.userJSON(c.user)
	m["email"] = c.user.Email
	return reply{status: http.StatusOK, body: m}
}

// listUsers finds accounts by exact username, or by a search over
// usernames, names and public e-mails; non-admins see basic accounts.
func listUsers(s *Server, c *call) reply {
	var out []map[string]any
	for _, name := range sortedKeys(s.users) {
		u := s.users[name]
		if un := c.query.Get("username"); un != "" && !strings.EqualFold(un, u.Username) {
			continue
		}
		if q := strings.ToLower(c.query.Get("search")); q != "" &&
			!strings.Contains(strings.ToLower(u.Username), q) && !strings.Contains(strings.ToLower(u.Name), q) && !strings.EqualFold(u.PublicEmail, q) {
			continue
		}
		out = append(out, s.basicUserJSON(u))
	}
	return page(c, out)
}

// userByID finds an account. Lock held.
func (s *Server) userByID(id int64) *User {
	for _, u := range s.users {
		if u.ID == id {
			return u
		}
	}
	return nil
}

// UserByID is the account id (nil when there is none). It takes the lock.
func (s *Server) UserByID(id int64) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userByID(id)
}

func getUser(s *Server, c *call) reply {
	id, err := strconv.ParseInt(c.params["user_id"], 10, 64)
	u := s.userByID(id)
	if err != nil || u == nil {
		return notFound("User")
	}
	return reply{status: http.StatusOK, body: s.userJSON(u)}
}

// getInheritedMember answers a member of the project or of a group above
// it, with the highest access level among them.
func getInheritedMember(s *Server, c *call) reply {
	id, err := strconv.ParseInt(c.params["user_id"], 10, 64)
	u := s.userByID(id)
	if err != nil || u == nil {
		return notFound("Member")
	}
	level := s.accessLocked(c.project, u)
	if level == 0 {
		return notFound("Member")
	}
	m := s.basicUserJSON(u)
	m["access_level"] = level
	m["created_at"] = timeJSON(c.project.CreatedAt)
	m["expires_at"] = nil
	return reply{status: http.StatusOK, body: m}
}

// getCommit reads a commit of the repository.
func getCommit(s *Server, c *call) reply {
	out, err := gitCmd(c.project.Dir, "log", "-1", "--format=%H%x00%h%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%P%x00%B", c.params["sha"]+"^{commit}", "--")
	if err != nil {
		return notFound("Commit")
	}
	f := strings.SplitN(strings.TrimRight(out, "\n"), "\x00", 10)
	if len(f) < 10 {
		return notFound("Commit")
	}
	title, _, _ := strings.Cut(f[9], "\n")
	parents := strings.Fields(f[8])
	if parents == nil {
		parents = []string{}
	}
	return reply{status: http.StatusOK, body: map[string]any{
		"id": f[0], "short_id": f[1], "title": title, "message": f[9], "author_name": f[2], "author_email": f[3], "authored_date": f[4],
		"committer_name": f[5], "committer_email": f[6], "committed_date": f[7], "created_at": f[7], "parent_ids": parents,
		"web_url": s.WebURL(c.project.Path) + "/-/commit/" + f[0], "trailers": map[string]string{}, "extended_trailers": map[string]string{},
	}}
}

// deleteBranch deletes a branch (never the default one).
func deleteBranch(s *Server, c *call) reply {
	b := c.params["branch"]
	if b == c.project.DefaultBranch {
		return apiError(http.StatusMethodNotAllowed, "405 Method Not Allowed")
	}
	if _, err := gitCmd(c.project.Dir, "rev-parse", "--verify", "-q", "refs/heads/"+b); err != nil {
		return notFound("Branch")
	}
	if _, err := gitCmd(c.project.Dir, "update-ref", "-d", "refs/heads/"+b); err != nil {
		return apiError(http.StatusInternalServerError, err.Error())
	}
	for _, mr := range c.project.MRs {
		if mr.Source == b && mr.State == "opened" {
			mr.State, mr.ClosedAt = "closed", s.Now()
		}
	}
	return reply{status: http.StatusNoContent}
}

// headOf is a branch's commit in the project's repository ("" when there
// is none). Lock not needed: git reads the repository.
func headOf(p *Project, branch string) string {
	out, err := gitCmd(p.Dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// hasUser reports whether ids holds u's.
func hasUser(ids []int64, u *User) bool { return u != nil && slices.Contains(ids, u.ID) }
