package ghtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v4"
)

// App is the GitHub App the server knows.
type App struct {
	ID      int64
	Slug    string
	Key     *rsa.PrivateKey
	KeyFile string // the private key in PEM, as GitHub hands it out
}

// NewApp makes the server's GitHub App with a fresh key, written to a PEM
// file in the test's temporary directory. It takes the lock.
func (s *Server) NewApp(slug string) *App {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		s.t.Fatal(err)
	}
	file := filepath.Join(s.t.TempDir(), slug+".private-key.pem")
	pemData := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(file, pemData, 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app = &App{ID: s.NewID(), Slug: slug, Key: key, KeyFile: file}
	return s.app
}

// TokenIdentity is who a token stands for. It takes the lock.
func (s *Server) TokenIdentity(token string) (Identity, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.tokens[token]
	return id, ok
}

// appOnly are the operations GitHub authenticates with the App's JWT.
func appOnly(tmpl string) bool {
	return strings.HasPrefix(tmpl, "/app/") || tmpl == "/app" ||
		tmpl == "/repos/{owner}/{repo}/installation" ||
		tmpl == "/orgs/{org}/installation" || tmpl == "/users/{username}/installation"
}

// authenticate checks the request's credentials for the operation. Lock held.
func (s *Server) authenticate(req *http.Request, tmpl string) (Identity, Reply, bool) {
	scheme, cred, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	cred = strings.TrimSpace(cred)
	if cred == "" {
		return Identity{}, Error(401, "Requires authentication"), false
	}
	if appOnly(tmpl) {
		if !strings.EqualFold(scheme, "bearer") || s.app == nil {
			return Identity{}, Error(401, "A JSON web token could not be decoded"), false
		}
		claims := &jwt.RegisteredClaims{}
		_, err := jwt.ParseWithClaims(cred, claims, func(tok *jwt.Token) (any, error) {
			if _, ok := tok.Method.(*jwt.SigningMethodRSA); !ok {
				return nil, fmt.Errorf("unexpected signing method %v", tok.Header["alg"])
			}
			return &s.app.Key.PublicKey, nil
		})
		if err != nil || claims.Issuer != strconv.FormatInt(s.app.ID, 10) {
			return Identity{}, Error(401, "A JSON web token could not be decoded"), false
		}
		return Identity{Kind: "app", Login: s.app.Slug + "[bot]"}, Reply{}, true
	}
	if !strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token") {
		return Identity{}, Error(401, "Bad credentials"), false
	}
	id, ok := s.tokens[cred]
	if !ok {
		return Identity{}, Error(401, "Bad credentials"), false
	}
	if id.Kind == "installation" {
		owner, repo := reqRepo(req, tmpl)
		if owner != "" {
			in := s.installations[id.Installation]
			if in == nil || !in.Repos[strings.ToLower(owner+"/"+repo)] {
				return Identity{}, Error(404, "Not Found"), false
			}
		}
	}
	return id, Reply{}, true
}

// reqRepo reads owner and repo from a /repos/{owner}/{repo}/… path.
func reqRepo(req *http.Request, tmpl string) (string, string) {
	if !strings.HasPrefix(tmpl, "/repos/{owner}/{repo}") {
		return "", ""
	}
	parts := strings.Split(strings.TrimPrefix(req.URL.Path, APIPrefix+"/repos/"), "/")
	if len(parts) < 2 {
		return "", ""
	}
	return parts[0], parts[1]
}

// mintToken makes a new token. Lock held.
func (s *Server) mintToken(prefix string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// checkGitAuth accepts what GitHub accepts on git's HTTP: Basic with a
// token as the password (any user name), or a bearer token. Lock held.
func (s *Server) checkGitAuth(req *http.Request, owner, repo string) bool {
	h := req.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	var token string
	switch {
	case strings.EqualFold(scheme, "basic"):
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		if err != nil {
			return false
		}
		_, token, _ = strings.Cut(string(raw), ":")
	case strings.EqualFold(scheme, "bearer"):
		token = strings.TrimSpace(cred)
	default:
		return false
	}
	id, ok := s.tokens[token]
	if !ok {
		return false
	}
	if id.Kind == "installation" {
		in := s.installations[id.Installation]
		return in != nil && in.Repos[strings.ToLower(owner+"/"+repo)]
	}
	return true
}
