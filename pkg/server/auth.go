package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"
)

// tokenEqual compares a presented token with the configured one in
// constant time (hashing first, so neither length leaks).
func tokenEqual(presented, want string) bool {
	a := sha256.Sum256([]byte(presented))
	b := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// bearer is the token of an "Authorization: Bearer …" header, or the
// password of basic authentication (what a browser can send), or "".
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	if _, pw, ok := r.BasicAuth(); ok {
		return pw
	}
	return ""
}

// readAllowed reports whether r may read the dashboard, the task API and
// the metrics: r carries the read token (or the ingest token), or a
// trusted proxy vouched for the user, or nothing of the kind is configured
// and reading is open on purpose (Options.ReadOpen).
func (s *Server) readAllowed(r *http.Request) bool {
	if s.readOpen() {
		return true
	}
	if s.opts.TrustedUserHeader != "" && r.Header.Get(s.opts.TrustedUserHeader) != "" {
		return true
	}
	t := bearer(r)
	if t == "" {
		return false
	}
	if s.opts.ReadToken != "" && tokenEqual(t, s.opts.ReadToken) {
		return true
	}
	return s.opts.IngestToken != "" && tokenEqual(t, s.opts.IngestToken)
}

// readOpen reports whether anyone may read: no read token and no trusted
// header is configured, and ReadOpen says so.
func (s *Server) readOpen() bool {
	return s.opts.ReadToken == "" && s.opts.TrustedUserHeader == "" && s.opts.ReadOpen
}

// readRefusal is what a refused reader is told: what to send, or, when no
// read token is configured, what the operator must set.
func (s *Server) readRefusal() string {
	if s.opts.ReadToken != "" || s.opts.TrustedUserHeader != "" {
		return "a read token is required (Authorization: Bearer, or basic authentication with the token as password)"
	}
	return "reading is closed: no read token is configured. Set http.read_token (REDFIX_READ_TOKEN) and send it (Authorization: Bearer, or basic authentication with the token as password), " +
		"or set http.trusted_user_header behind an authenticating proxy, or http.read_open: true (REDFIX_READ_OPEN=true) to let anyone who reaches the bot read"
}

// guardRead wraps a read route with the read check.
func (s *Server) guardRead(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.readAllowed(r) {
			s.log.Warn("read refused: no valid read token", zapRoute(r), zapRemote(r))
			w.Header().Set("WWW-Authenticate", `Basic realm="redfix", charset="UTF-8"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": s.readRefusal()})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Timeouts bound how long a client may hold a connection.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included: a body sent one
	// byte at a time is cut off when it passes.
	Read time.Duration
	// Write bounds writing a response.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for the next
	// request.
	Idle time.Duration
}

// DefaultTimeouts suit reports of up to the API's size limit on a slow
// link.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: 2 * time.Minute, Write: 2 * time.Minute, Idle: 2 * time.Minute}

// HTTPServer is an http.Server for h with the timeouts set (zero fields
// take DefaultTimeouts').
func HTTPServer(h http.Handler, t Timeouts) *http.Server {
	if t.ReadHeader <= 0 {
		t.ReadHeader = DefaultTimeouts.ReadHeader
	}
	if t.Read <= 0 {
		t.Read = DefaultTimeouts.Read
	}
	if t.Write <= 0 {
		t.Write = DefaultTimeouts.Write
	}
	if t.Idle <= 0 {
		t.Idle = DefaultTimeouts.Idle
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle, MaxHeaderBytes: 64 << 10}
}

// read wraps a read route's handler with the read check.
func (s *Server) read(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.readAllowed(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="redfix", charset="UTF-8"`)
			return &Error{Code: http.StatusUnauthorized, Message: s.readRefusal()}
		}
		return h(w, r)
	}
}

func zapRoute(r *http.Request) zap.Field  { return zap.String("route", r.Method+" "+r.URL.Path) }
func zapRemote(r *http.Request) zap.Field { return zap.String("remote", r.RemoteAddr) }
