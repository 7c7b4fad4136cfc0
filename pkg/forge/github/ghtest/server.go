// Package ghtest is a GitHub for tests: an httptest server with state in
// memory that speaks GitHub's REST protocol for the endpoints redfix uses,
// and a real git server (git's smart HTTP) for the same repositories, so that
// clones and pushes really run.
//
// Every request the server receives, and every response it gives, is checked
// against GitHub's published REST description (see LoadDescription): a
// request that GitHub would refuse, or a response that GitHub would not give,
// fails the test. Responses start from the example GitHub publishes for the
// operation (Description.Example), with the fields the state decides set.
//
// The API answers under /api/v3 as GitHub Enterprise Server does (so clients
// are configured with a base URL, as they are for GHES), and git answers at
// /{owner}/{repo}.git.
//
// # Adding endpoints
//
// An endpoint is a HandlerFunc registered for a method and the path template
// as the description writes it, in a file of its own:
//
//	func (s *Server) registerActions() {
//		s.Handle("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", s.getRun)
//	}
//
//	func (s *Server) getRun(r *Request) Reply {
//		repo, ok := s.Repo(r.Params["owner"], r.Params["repo"])   // lock held
//		...
//		body, err := s.Desc.Example("GET", r.Template, 200)
//		...
//		return JSON(200, body)
//	}
//
// Handlers run with the server's lock held, so they read and change the state
// (Repo, the repository's fields, maps of their own kept in Server.Ext) freely
// and must not call methods that take the lock (those documented as such).
// A handler of another package registers itself through Server.Handle after
// New; fields of its own go into Server.Ext under a key it chooses.
package ghtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/routers"
)

// APIPrefix is where the REST API answers.
const APIPrefix = "/api/v3"

// Request is one call to the API, checked against the description.
type Request struct {
	*http.Request
	// Template is the operation's path template ("/repos/{owner}/{repo}/pulls").
	Template string
	// Params are the path parameters, unescaped.
	Params map[string]string
	// Body is the request body as sent.
	Body []byte
	// Auth is who the token belongs to.
	Auth Identity
}

// Decode unmarshals the request body into v.
func (r *Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Reply is a handler's answer.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte // JSON unless Header says otherwise
}

// JSON is a reply with v as its JSON body.
func JSON(status int, v any) Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return Reply{Status: 500, Body: []byte(fmt.Sprintf(`{"message":%q}`, err.Error()))}
	}
	return Reply{Status: status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: data}
}

// Error is a reply in GitHub's error format.
func Error(status int, message string) Reply {
	return JSON(status, map[string]any{"message": message, "documentation_url": "https://docs.github.com/rest"})
}

// ValidationFailed is GitHub's 422 with one error.
func ValidationFailed(message, resource, field, code string) Reply {
	return JSON(422, map[string]any{
		"message":           "Validation Failed",
		"documentation_url": "https://docs.github.com/rest",
		"errors":            []any{map[string]any{"resource": resource, "field": field, "code": code, "message": message}},
	})
}

// HandlerFunc answers one operation. It runs with the server's lock held.
type HandlerFunc func(r *Request) Reply

// Call is one request the server answered, for assertions.
type Call struct {
	Method   string
	Template string // "" for git requests and unknown paths
	Path     string
	Status   int
	Attempt  int // 1 for the first call of Method+Path, 2 for its first retry, …
	At       time.Time
}

// Fault is an answer forced on the next calls of a route.
type Fault struct {
	Status int
	// RetryAfter, when set, is sent as Retry-After (seconds); with status
	// 403 it makes GitHub's secondary rate limit answer.
	RetryAfter time.Duration
	// After applies the fault after the handler ran (the change is made,
	// the answer is lost), instead of before it.
	After bool
}

// Server is the test GitHub.
type Server struct {
	*httptest.Server
	Desc *Description
	t    testing.TB

	mu       sync.Mutex
	handlers map[string]HandlerFunc
	faults   map[string][]Fault
	calls    []Call
	attempts map[string]int
	// Now is the server's clock (issued token expiry, timestamps).
	Now func() time.Time

	repos         map[string]*Repo
	users         map[string]*User
	tokens        map[string]Identity
	installations map[int64]*Installation
	app           *App
	nextID        int64
	gitDir        string
	gitStats      map[string]*GitStats
	// Ext holds state of handlers added from other files, by a key of their
	// choosing.
	Ext map[string]any
}

// Identity is who a token or JWT stands for.
type Identity struct {
	Kind         string // "user", "installation" or "app"
	Login        string
	Installation int64
}

// User is a GitHub user.
type User struct {
	Login  string
	ID     int64
	Emails []string
}

// New starts a test GitHub for t; it stops when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		Desc:          LoadDescription(t),
		t:             t,
		handlers:      map[string]HandlerFunc{},
		faults:        map[string][]Fault{},
		attempts:      map[string]int{},
		Now:           time.Now,
		repos:         map[string]*Repo{},
		users:         map[string]*User{},
		tokens:        map[string]Identity{},
		installations: map[int64]*Installation{},
		nextID:        1000,
		gitDir:        t.TempDir(),
		gitStats:      map[string]*GitStats{},
		Ext:           map[string]any{},
	}
	s.registerComments()
	s.registerCore()
	s.registerInstallations()
	s.registerActions()
	s.registerChecks()
	s.Server = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.Close)
	return s
}

// APIURL is the base URL to configure clients with.
func (s *Server) APIURL() string { return s.URL + APIPrefix + "/" }

// Handle registers h for the operation at method and template (as GitHub's
// description writes them). It takes the lock.
func (s *Server) Handle(method, template string, h HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[strings.ToUpper(method)+" "+template] = h
}

// Inject makes the next n calls of the operation answer with f. It takes
// the lock.
func (s *Server) Inject(method, template string, n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToUpper(method) + " " + template
	for range n {
		s.faults[key] = append(s.faults[key], f)
	}
}

// SecondaryRateLimit is the fault of GitHub's secondary rate limit: 403 with
// Retry-After.
func SecondaryRateLimit(retryAfter time.Duration) Fault {
	return Fault{Status: 403, RetryAfter: retryAfter}
}

// Calls are the requests answered so far. It takes the lock.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo are the calls of one operation. It takes the lock.
func (s *Server) CallsTo(method, template string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method && c.Template == template {
			out = append(out, c)
		}
	}
	return out
}

// Lock and Unlock give tests and other files access to the state outside
// handlers.
func (s *Server) Lock()   { s.mu.Lock() }
func (s *Server) Unlock() { s.mu.Unlock() }

// NewID is a fresh numeric id. Lock held.
func (s *Server) NewID() int64 {
	s.nextID++
	return s.nextID
}

// AddUser makes a user; emails are the commit addresses that map to it. It
// takes the lock.
func (s *Server) AddUser(login string, emails ...string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := &User{Login: login, ID: s.NewID(), Emails: emails}
	s.users[strings.ToLower(login)] = u
	return u
}

// UserByEmail finds the user a commit address belongs to. Lock held.
func (s *Server) UserByEmail(email string) *User {
	for _, u := range s.users {
		for _, e := range u.Emails {
			if strings.EqualFold(e, email) {
				return u
			}
		}
	}
	return nil
}

// UserByLogin finds a user. Lock held.
func (s *Server) UserByLogin(login string) *User { return s.users[strings.ToLower(login)] }

// AddToken makes token a personal access token of login. It takes the lock.
func (s *Server) AddToken(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = Identity{Kind: "user", Login: login}
}

func (s *Server) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if !strings.HasPrefix(req.URL.Path, APIPrefix+"/") {
		if s.serveGit(w, req) {
			return
		}
		s.record(Call{Method: req.Method, Path: req.URL.Path, Status: 404})
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	reply, tmpl := s.answer(req, body)
	s.record(Call{Method: req.Method, Template: tmpl, Path: req.URL.Path, Status: reply.Status})
	for k, v := range reply.Header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" && len(reply.Body) > 0 {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(reply.Status)
	_, _ = w.Write(reply.Body)
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := c.Method + " " + c.Path
	s.attempts[key]++
	c.Attempt = s.attempts[key]
	c.At = s.Now()
	s.calls = append(s.calls, c)
}

// answer routes, validates, applies faults and runs the handler.
func (s *Server) answer(req *http.Request, body []byte) (Reply, string) {
	// The description's paths have no prefix.
	vreq := req.Clone(req.Context())
	vreq.URL.Path = strings.TrimPrefix(req.URL.Path, APIPrefix)
	vreq.URL.RawPath = ""
	if req.URL.RawPath != "" {
		vreq.URL.RawPath = strings.TrimPrefix(req.URL.RawPath, APIPrefix)
	}
	vbody := body
	if string(bytes.TrimSpace(body)) == "null" {
		// GitHub takes a JSON null as no body (clients send it for
		// optional bodies left out); the description has no word for it.
		vbody = nil
		vreq.Header.Del("Content-Type")
		vreq.ContentLength = 0
	}
	vreq.Body = io.NopCloser(bytes.NewReader(vbody))
	route, params, err := s.findRoute(vreq)
	if err != nil {
		if errors.Is(err, errOutside) {
			s.t.Errorf("ghtest: %s %s: %v", req.Method, req.URL.Path, err)
			return Error(404, "Not Found"), ""
		}
		s.t.Errorf("ghtest: %s %s: GitHub has no such endpoint: %v", req.Method, req.URL.Path, err)
		return Error(404, "Not Found"), ""
	}
	tmpl := route.Path
	if err := s.Desc.ValidateRequest(req.Context(), vreq, route, params); err != nil {
		s.t.Errorf("ghtest: %s %s: the request does not match GitHub's description: %v", req.Method, tmpl, err)
		return Error(422, "request does not match the description: "+err.Error()), tmpl
	}
	for k, v := range params {
		if u, err := url.PathUnescape(v); err == nil {
			params[k] = u
		}
	}

	s.mu.Lock()
	key := req.Method + " " + tmpl
	var fault *Fault
	if fs := s.faults[key]; len(fs) > 0 {
		fault = &fs[0]
		s.faults[key] = fs[1:]
	}
	h := s.handlers[key]
	var reply Reply
	switch {
	case fault != nil && !fault.After:
		reply = faultReply(*fault)
	case h == nil:
		s.mu.Unlock()
		s.t.Errorf("ghtest: %s %s is GitHub's but the test server does not implement it", req.Method, tmpl)
		return Error(501, "not implemented by the test server"), tmpl
	default:
		r := &Request{Request: req, Template: tmpl, Params: params, Body: body}
		if id, rep, ok := s.authenticate(req, tmpl); !ok {
			reply = rep
		} else {
			r.Auth = id
			reply = h(r)
			if fault != nil {
				reply = faultReply(*fault)
			}
		}
	}
	s.mu.Unlock()

	if reply.Status < 300 || reply.Status == 404 || reply.Status == 422 {
		// Faults and the error answers are GitHub's shape by construction;
		// the rest are checked.
		if err := s.Desc.ValidateResponse(req.Context(), vreq, route, params, reply.Status, reply.Header, reply.Body); err != nil {
			s.t.Errorf("ghtest: %s %s: the response (%d) does not match GitHub's description: %v", req.Method, tmpl, reply.Status, err)
		}
	}
	return reply, tmpl
}

// findRoute finds the operation, also for the last parameters that hold
// slashes ({ref}, {path}), which GitHub takes unescaped.
func (s *Server) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := s.Desc.FindRoute(req)
	if err == nil {
		return route, params, nil
	}
	segs := strings.Split(strings.TrimPrefix(req.URL.EscapedPath(), "/"), "/")
	for join := 2; join <= len(segs)-1; join++ {
		head := segs[:len(segs)-join]
		tail := strings.Join(segs[len(segs)-join:], "%2F")
		r2 := req.Clone(req.Context())
		raw := "/" + strings.Join(append(append([]string{}, head...), tail), "/")
		u, perr := url.Parse(raw)
		if perr != nil {
			break
		}
		r2.URL.Path, r2.URL.RawPath = u.Path, u.RawPath
		route, params, err2 := s.Desc.FindRoute(r2)
		if err2 == nil && (strings.HasSuffix(route.Path, "/{ref}") || strings.HasSuffix(route.Path, "/{path}")) {
			return route, params, nil
		}
	}
	return nil, nil, err
}

func faultReply(f Fault) Reply {
	var rep Reply
	switch f.Status {
	case 403:
		rep = Error(403, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
	case 429:
		rep = Error(429, "Too many requests")
	default:
		rep = Reply{Status: f.Status, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<html><body><h1>" + http.StatusText(f.Status) + "</h1></body></html>")}
	}
	if f.RetryAfter > 0 {
		rep.Header.Set("Retry-After", fmt.Sprint(int(f.RetryAfter.Round(time.Second)/time.Second)))
	}
	return rep
}

// sortedKeys is for error messages that list what exists.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
