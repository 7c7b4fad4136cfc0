// Package gltest is a GitLab for tests: an httptest server with state in
// memory that speaks GitLab's REST API (v4) for the endpoints redfix
// calls, a real git server (git's smart HTTP, through git http-backend) for
// the same projects with GitLab's token authentication (any user name, a
// token as the password: redfix sends oauth2), and the webhooks GitLab
// sends for pipelines, merge requests and notes.
//
// Projects live in groups that nest ("acme/payments/ledger") and are
// addressed by their numeric id or their full path URL-encoded, as GitLab
// addresses them; members have access levels on a project or on any
// group above it. Every request is recorded (Calls) and checked against
// what GitLab documents for its endpoint: its authentication, its query
// parameters and body fields (one GitLab does not take, or a required one
// missing, is answered 400 as GitLab would and fails the test at its
// end), the access its caller needs. Answers carry the fields GitLab
// documents for them; the package's own tests decode each answer strictly
// into the official client's types, and each webhook payload against the
// examples in testdata/hooks, written from GitLab's documented shapes.
package gltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// APIPrefix is where the REST API answers.
const APIPrefix = "/api/v4"

// The access levels GitLab gives members.
const (
	Guest      = 10
	Reporter   = 20
	Developer  = 30
	Maintainer = 40
	Owner      = 50
)

// Server is the test GitLab.
type Server struct {
	// URL is the instance's base URL; the API is under URL/api/v4.
	URL string
	srv *httptest.Server
	t   testing.TB

	mu       sync.Mutex
	nextID   int64
	users    map[string]*User // by lower-cased username
	tokens   map[string]*User
	groups   map[string]*Group   // by lower-cased full path
	projects map[string]*Project // by lower-cased full path
	calls    []Call
	problems []string
	gitDir   string
	// Now is the server's clock.
	Now func() time.Time
}

// User is an account.
type User struct {
	ID                 int64
	Username, Name     string
	Email, PublicEmail string
	Bot                bool
}

// Group is a group (or a subgroup) and its members' access levels.
type Group struct {
	Path    string
	Members map[int64]int
}

// Call is one request the server answered.
type Call struct {
	Method string
	// Route is the endpoint's pattern ("/projects/:id/merge_requests");
	// "" for git requests and unknown paths.
	Route  string
	Path   string // as sent, escaped
	Query  url.Values
	Body   map[string]any
	User   string
	Status int
}

// New starts a test GitLab for t; it stops when t ends, and t fails then
// if a request was one GitLab would refuse for its shape.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		t: t, nextID: 100, users: map[string]*User{}, tokens: map[string]*User{},
		groups: map[string]*Group{}, projects: map[string]*Project{}, gitDir: t.TempDir(), Now: time.Now,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(func() {
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, p := range s.problems {
			t.Errorf("gltest: a request GitLab would refuse: %s", p)
		}
	})
	return s
}

// id is a new id. Lock held.
func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

// AddUser makes an account; token, when not empty, authenticates as it.
// It takes the lock.
func (s *Server) AddUser(username, email, token string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := &User{ID: s.id(), Username: username, Name: strings.ToUpper(username[:1]) + username[1:], Email: email, PublicEmail: email}
	s.users[strings.ToLower(username)] = u
	if token != "" {
		s.tokens[token] = u
	}
	return u
}

// UserNamed is the account username (nil when there is none). It takes
// the lock.
func (s *Server) UserNamed(username string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[strings.ToLower(username)]
}

// AddGroupMember gives u level on the group at path (made when needed)
// and every project below it. It takes the lock.
func (s *Server) AddGroupMember(path string, u *User, level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[strings.ToLower(path)]
	if g == nil {
		g = &Group{Path: path, Members: map[int64]int{}}
		s.groups[strings.ToLower(path)] = g
	}
	g.Members[u.ID] = level
}

// AddMember gives u level on the project at path. It takes the lock.
func (s *Server) AddMember(path string, u *User, level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.projects[strings.ToLower(path)]; p != nil {
		p.Members[u.ID] = level
	}
}

// accessLocked is u's access to p: the highest of its membership and the
// memberships of the groups above it. Lock held.
func (s *Server) accessLocked(p *Project, u *User) int {
	if u == nil {
		return 0
	}
	level := p.Members[u.ID]
	segs := strings.Split(p.Path, "/")
	for i := 1; i < len(segs); i++ {
		if g := s.groups[strings.ToLower(strings.Join(segs[:i], "/"))]; g != nil {
			level = max(level, g.Members[u.ID])
		}
	}
	return level
}

// Calls are the requests answered so far. It takes the lock.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Lock and Unlock hold the server's state still, for a test that reads
// it directly.
func (s *Server) Lock()   { s.mu.Lock() }
func (s *Server) Unlock() { s.mu.Unlock() }

// reply is a handler's answer.
type reply struct {
	status int
	body   any    // JSON, unless raw is set
	raw    []byte // sent as it is
	header http.Header
}

// apiError is GitLab's error body.
func apiError(status int, message string) reply {
	return reply{status: status, body: map[string]any{"message": message}}
}

// notFound is GitLab's 404, which it also answers for what the caller may
// not see.
func notFound(what string) reply { return apiError(http.StatusNotFound, "404 "+what+" Not Found") }

// call is one API request being answered.
type call struct {
	*http.Request
	route   *route
	params  map[string]string
	query   url.Values
	body    map[string]any
	user    *User
	project *Project
}

// str is the body field or query parameter name as a string.
func (c *call) str(name string) string {
	if v, ok := c.body[name]; ok {
		switch x := v.(type) {
		case string:
			return x
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			return strconv.FormatBool(x)
		}
	}
	return c.query.Get(name)
}

// serveHTTP answers git or the API.
func (s *Server) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if s.serveGit(w, req) {
		return
	}
	rest, ok := strings.CutPrefix(req.URL.EscapedPath(), APIPrefix+"/")
	if !ok {
		http.NotFound(w, req)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	rep, c := s.answer(req, rest, body)
	s.write(w, rep)
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := Call{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.Query(), Status: rep.status}
	if c != nil {
		rec.Body = c.body
		if c.route != nil {
			rec.Route = c.route.pattern
		}
		if c.user != nil {
			rec.User = c.user.Username
		}
	}
	s.calls = append(s.calls, rec)
}

func (s *Server) write(w http.ResponseWriter, rep reply) {
	for k, vs := range rep.header {
		w.Header()[k] = vs
	}
	if rep.raw != nil {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write(rep.raw)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	if rep.body != nil {
		_ = json.NewEncoder(w).Encode(rep.body)
	}
}

// answer finds the route, checks the request against it and runs its
// handler with the lock held.
func (s *Server) answer(req *http.Request, rest string, raw []byte) (reply, *call) {
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return apiError(http.StatusBadRequest, "malformed path"), nil
		}
		segs[i] = u
	}
	c := &call{Request: req, query: req.URL.Query()}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.user = s.authLocked(req)
	rt, params := match(req.Method, segs)
	if rt == nil {
		s.problems = append(s.problems, fmt.Sprintf("%s %s: no such endpoint", req.Method, req.URL.EscapedPath()))
		return notFound("Endpoint"), c
	}
	c.route, c.params = rt, params
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &c.body); err != nil {
			s.problems = append(s.problems, fmt.Sprintf("%s %s: the body is not a JSON object: %v", req.Method, rt.pattern, err))
			return apiError(http.StatusBadRequest, "400 Bad request - body is not JSON"), c
		}
	}
	if c.user == nil {
		return apiError(http.StatusUnauthorized, "401 Unauthorized"), c
	}
	if msg := rt.check(c); msg != "" {
		s.problems = append(s.problems, fmt.Sprintf("%s %s: %s", req.Method, rt.pattern, msg))
		return apiError(http.StatusBadRequest, "400 Bad request - "+msg), c
	}
	if id, ok := params["id"]; ok {
		p := s.projectLocked(id)
		if p == nil || s.accessLocked(p, c.user) < Reporter {
			return notFound("Project"), c
		}
		if rt.write && s.accessLocked(p, c.user) < Developer {
			return apiError(http.StatusForbidden, "403 Forbidden"), c
		}
		c.project = p
	}
	return rt.handle(s, c), c
}

// authLocked is who the request's token belongs to: PRIVATE-TOKEN, or an
// OAuth bearer token. Lock held.
func (s *Server) authLocked(req *http.Request) *User {
	tok := req.Header.Get("PRIVATE-TOKEN")
	if tok == "" {
		tok, _ = strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	}
	return s.tokens[tok]
}

// projectLocked finds a project by its id or its full path. Lock held.
func (s *Server) projectLocked(id string) *Project {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil {
		for _, p := range s.projects {
			if p.ID == n {
				return p
			}
		}
		return nil
	}
	return s.projects[strings.ToLower(id)]
}

// page answers one page of items (GitLab's offset pagination: page and
// per_page, at most 100, and the X- headers).
func page[T any](c *call, items []T) reply {
	per, _ := strconv.Atoi(c.query.Get("per_page"))
	if per <= 0 {
		per = 20
	}
	per = min(per, 100)
	n, _ := strconv.Atoi(c.query.Get("page"))
	n = max(n, 1)
	from := min((n-1)*per, len(items))
	to := min(from+per, len(items))
	h := http.Header{}
	total := (len(items) + per - 1) / per
	h.Set("X-Total", strconv.Itoa(len(items)))
	h.Set("X-Total-Pages", strconv.Itoa(total))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Page", strconv.Itoa(n))
	if n < total {
		h.Set("X-Next-Page", strconv.Itoa(n+1))
	} else {
		h.Set("X-Next-Page", "")
	}
	out := items[from:to]
	if out == nil {
		out = []T{}
	}
	return reply{status: http.StatusOK, body: out, header: h}
}

// timeJSON is t as GitLab writes times in its API (RFC 3339 with
// milliseconds, UTC); nil for the zero time.
func timeJSON(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
