package testsvc

import (
	"crypto/subtle"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// GitHTTP is git's smart HTTP server, `git http-backend` behind
// net/http/cgi on a loopback port, serving every repository under a base
// directory and asking every request for one user's password (HTTP basic
// authentication), as a self-hosted git server does.
type GitHTTP struct {
	srv    *httptest.Server
	denied atomic.Int64
}

// StartGitHTTP serves the repositories under base at http://127.0.0.1:PORT/NAME
// (base/NAME, a bare repository), to user with password alone (fetches and
// pushes), until the test ends.
func StartGitHTTP(t testing.TB, base, user, password string) *GitHTTP {
	t.Helper()
	git := Need(t, "git", "git")
	g := &GitHTTP{}
	backend := &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Dir:  base,
		Env: []string{
			"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + base, "REMOTE_USER=" + user,
		},
		InheritEnv: []string{"PATH"},
	}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			g.denied.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// URL is where the server serves the repository base/name.
func (g *GitHTTP) URL(name string) string { return g.srv.URL + "/" + name }

// Denied is how many requests were refused for their credentials.
func (g *GitHTTP) Denied() int64 { return g.denied.Load() }
