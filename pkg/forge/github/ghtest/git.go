package ghtest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Repo is a repository of the test GitHub: its API state and a bare git
// repository served over smart HTTP.
type Repo struct {
	Owner, Name   string
	ID            int64
	DefaultBranch string
	Private       bool
	// Dir is the bare repository.
	Dir   string
	Pulls []*Pull
	// Issues are the numbers of its issues that are not pull requests
	// (numbered with them, as GitHub does).
	Issues []int
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// Pull is a pull request.
type Pull struct {
	ID            int64
	Number        int
	Title, Body   string
	Head, Base    string // branch names
	HeadSHA       string
	Draft         bool
	State         string // "open" or "closed"
	Merged        bool
	User          string
	Labels        []string
	Reviewers     []string
	TeamReviewers []string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// GitStats counts what git clients asked a repository for.
type GitStats struct {
	// Advertisements counts info/refs requests by service
	// (git-upload-pack for clone and fetch, git-receive-pack for push).
	Advertisements map[string]int
	// UploadPacks and ReceivePacks count the POSTs that move objects or
	// refs (protocol v2's ls-refs is an upload-pack POST too).
	UploadPacks, ReceivePacks int
	// Denied counts requests refused for their credentials.
	Denied int
}

// CreateRepo makes owner/name from the local repository at from (its
// branches and tags), served at CloneURL. It takes the lock.
func (s *Server) CreateRepo(owner, name, from string) *Repo {
	s.t.Helper()
	dir := filepath.Join(s.gitDir, owner, name+".git")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if out, err := gitCmd("", "clone", "-q", "--bare", from, dir); err != nil {
		s.t.Fatalf("ghtest: create %s/%s: %v: %s", owner, name, err, out)
	}
	if out, err := gitCmd(dir, "config", "http.receivepack", "true"); err != nil {
		s.t.Fatalf("ghtest: %v: %s", err, out)
	}
	head, err := gitCmd(dir, "symbolic-ref", "--short", "HEAD")
	if err != nil {
		s.t.Fatalf("ghtest: default branch of %s: %v", from, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Repo{Owner: owner, Name: name, ID: s.NewID(), DefaultBranch: strings.TrimSpace(head), Dir: dir}
	s.repos[strings.ToLower(r.FullName())] = r
	s.gitStats[strings.ToLower(r.FullName())] = &GitStats{Advertisements: map[string]int{}}
	return r
}

// Repo finds a repository. Lock held.
func (s *Server) Repo(owner, name string) (*Repo, bool) {
	r, ok := s.repos[strings.ToLower(owner+"/"+name)]
	return r, ok
}

// CloneURL is where git clones owner/name from.
func (s *Server) CloneURL(owner, name string) string {
	return s.URL + "/" + owner + "/" + name + ".git"
}

// HTMLURL is the repository's page.
func (s *Server) HTMLURL(owner, name string) string {
	return s.URL + "/" + owner + "/" + name
}

// GitStatsOf is a copy of the git counters of owner/name. It takes the lock.
func (s *Server) GitStatsOf(owner, name string) GitStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.gitStats[strings.ToLower(owner+"/"+name)]
	if st == nil {
		return GitStats{}
	}
	cp := *st
	cp.Advertisements = map[string]int{}
	for k, v := range st.Advertisements {
		cp.Advertisements[k] = v
	}
	return cp
}

// Git runs git in owner/name's bare repository (to read what was pushed).
func (s *Server) Git(owner, name string, args ...string) (string, error) {
	s.mu.Lock()
	r, ok := s.Repo(owner, name)
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("no repository %s/%s", owner, name)
	}
	return gitCmd(r.Dir, args...)
}

// serveGit answers git's smart HTTP for /{owner}/{name}.git/…; false when the
// path is not a repository's.
func (s *Server) serveGit(w http.ResponseWriter, req *http.Request) bool {
	parts := strings.SplitN(strings.TrimPrefix(req.URL.Path, "/"), "/", 3)
	if len(parts) < 3 {
		return false
	}
	// GitHub serves git at /OWNER/NAME.git and at /OWNER/NAME alike.
	if !strings.HasSuffix(parts[1], ".git") {
		switch parts[2] {
		case "info/refs", "git-upload-pack", "git-receive-pack":
		default:
			return false
		}
		req = req.Clone(req.Context())
		req.URL.Path = "/" + parts[0] + "/" + parts[1] + ".git/" + parts[2]
		req.URL.RawPath = ""
	}
	owner, name := parts[0], strings.TrimSuffix(parts[1], ".git")
	s.mu.Lock()
	repo, ok := s.Repo(owner, name)
	if !ok {
		s.mu.Unlock()
		return false
	}
	st := s.gitStats[strings.ToLower(repo.FullName())]
	if !s.checkGitAuth(req, owner, name) {
		st.Denied++
		s.mu.Unlock()
		s.record(Call{Method: req.Method, Path: req.URL.Path, Status: 401})
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return true
	}
	switch {
	case strings.HasSuffix(req.URL.Path, "/info/refs"):
		st.Advertisements[req.URL.Query().Get("service")]++
	case strings.HasSuffix(req.URL.Path, "/git-upload-pack"):
		st.UploadPacks++
	case strings.HasSuffix(req.URL.Path, "/git-receive-pack"):
		st.ReceivePacks++
	}
	s.mu.Unlock()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		http.Error(w, err.Error(), 500)
		return true
	}
	h := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Dir:  s.gitDir,
		Env: []string{
			"GIT_PROJECT_ROOT=" + s.gitDir,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"REMOTE_USER=redfix-test",
			"HOME=" + s.gitDir,
		},
		InheritEnv: []string{"PATH"},
	}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	h.ServeHTTP(sw, req)
	s.record(Call{Method: req.Method, Path: req.URL.Path, Status: sw.status})
	return true
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// gitCmd runs git with a clean configuration.
func gitCmd(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}
