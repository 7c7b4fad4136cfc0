package gltest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"strings"
	"time"
)

// serveGit answers git's smart HTTP for /PATH.git/… (and /PATH/…), with
// GitLab's token authentication: HTTP Basic, any user name, a token of an
// account that may read the project (push: write to it) as the password.
// false when the path is no project's.
func (s *Server) serveGit(w http.ResponseWriter, req *http.Request) bool {
	path, service, ok := gitPath(req.URL.Path)
	if !ok {
		return false
	}
	s.mu.Lock()
	p, found := s.Project(path)
	if !found {
		s.mu.Unlock()
		return false
	}
	push := service == "git-receive-pack" || req.URL.Query().Get("service") == "git-receive-pack"
	user, pass, hasAuth := req.BasicAuth()
	u := s.tokens[pass]
	need := Reporter
	if push {
		need = Developer
	}
	allowed := hasAuth && user != "" && u != nil && s.accessLocked(p, u) >= need
	rec := Call{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query()}
	if u != nil {
		rec.User = u.Username
	}
	if !allowed {
		rec.Status = http.StatusUnauthorized
		s.calls = append(s.calls, rec)
		s.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="GitLab"`)
		http.Error(w, "HTTP Basic: Access denied", http.StatusUnauthorized)
		return true
	}
	s.mu.Unlock()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	r2 := req.Clone(req.Context())
	r2.URL.Path = "/" + path + ".git/" + service
	r2.URL.RawPath = ""
	h := &cgi.Handler{
		Path: gitBin, Args: []string{"http-backend"}, Dir: s.gitDir,
		Env:        []string{"GIT_PROJECT_ROOT=" + s.gitDir, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "REMOTE_USER=" + u.Username, "HOME=" + s.gitDir},
		InheritEnv: []string{"PATH"},
	}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	h.ServeHTTP(sw, r2)
	s.mu.Lock()
	rec.Status = sw.status
	s.calls = append(s.calls, rec)
	s.mu.Unlock()
	return true
}

// gitPath splits a git request's path into the project's path and the
// service's part (info/refs, git-upload-pack, git-receive-pack).
func gitPath(p string) (path, service string, ok bool) {
	for _, svc := range []string{"info/refs", "git-upload-pack", "git-receive-pack"} {
		if rest, found := strings.CutSuffix(p, "/"+svc); found {
			rest = strings.TrimSuffix(strings.TrimPrefix(rest, "/"), ".git")
			return rest, svc, rest != "" && strings.Contains(rest, "/")
		}
	}
	return "", "", false
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

// gitCmd runs git in dir with a clean configuration.
func gitCmd(dir string, args ...string) (string, error) { return gitCmdEnv(dir, nil, args...) }

func gitCmdEnv(dir string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}
