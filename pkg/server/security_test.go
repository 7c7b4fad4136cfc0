package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/repourl"
)

func mustAllow(t *testing.T, patterns ...string) *repourl.Allowlist {
	t.Helper()
	a, err := repourl.NewAllowlist(patterns...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestPostReportAllowlist(t *testing.T) {
	srv, in, logs, _ := setup(t, Options{Allow: mustAllow(t, "https://github.com/org/*", "/srv/repos/**")})
	for _, c := range []struct {
		repo string
		code int
	}{
		{"https://github.com/org/app.git", 202},
		{"/srv/repos/app", 202},
		{"/etc", 403},
		{"file:///etc", 403},
		{"/srv/repos/../../etc", 403},
		{"ssh://127.0.0.1:1/x.git", 403},
		{"https://github.com/other/app", 403},
		{"--upload-pack=touch /tmp/pwned", 400},
		{"ext::sh -c touch% /tmp/pwned", 400},
	} {
		commit := fmt.Sprintf("c%d", c.code)
		code, out := post(t, srv.URL+"/api/v1/reports?commit="+commit+"&repo="+url.QueryEscape(c.repo), goodReport, nil)
		if code != c.code {
			t.Errorf("repo %q: %d %v, want %d", c.repo, code, out, c.code)
		}
	}
	if len(in.subs) != 2 {
		t.Fatalf("stored %d submissions, want the 2 allowed", len(in.subs))
	}
	if got := logs.FilterMessage("request failed").Len(); got != 7 {
		t.Fatalf("%d rejections logged, want 7", got)
	}
}

func TestPostReportHostileRevisions(t *testing.T) {
	srv, in, _, _ := setup(t, Options{})
	for _, q := range []string{
		"commit=--upload-pack=x",
		"commit=abc&good=-x",
		"commit=abc&branch=--output=/tmp/x",
		"commit=a..b",
		"commit=abc%20def",
		"commit=abc&good=HEAD:secret",
	} {
		code, out := post(t, srv.URL+"/api/v1/reports?repo=/r&"+q, goodReport, nil)
		if code != http.StatusBadRequest {
			t.Errorf("%s: %d %v, want 400", q, code, out)
		}
	}
	if len(in.subs) != 0 {
		t.Fatalf("stored %d hostile submissions", len(in.subs))
	}
}

func TestPostReportCanonicalRepository(t *testing.T) {
	srv, in, _, _ := setup(t, Options{Allow: mustAllow(t, "https://github.com/org/*")})
	var ids []string
	for _, repo := range []string{"https://github.com/org/app", "HTTPS://GitHub.com/org/x/../app.git/", "https://token:x@github.com/org/app"} {
		code, out := post(t, srv.URL+"/api/v1/reports?commit=abc&repo="+url.QueryEscape(repo), goodReport, nil)
		if code != http.StatusAccepted {
			t.Fatalf("%s: %d %v", repo, code, out)
		}
		ids = append(ids, out["id"].(string))
	}
	if ids[0] != ids[1] || ids[1] != ids[2] || len(in.subs) != 1 || in.subs[0].Repo != "https://github.com/org/app" {
		t.Fatalf("two spellings of one repository were stored apart: ids %v, stored %+v", ids, in.subs)
	}
}

func TestReadToken(t *testing.T) {
	srv, _, _, _ := setup(t, Options{ReadToken: "r34d", IngestToken: "1ngest", TrustedUserHeader: "X-Auth-User"})
	do := func(path string, hdr map[string]string) int {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/", "/api/v1/tasks", "/api/v1/tasks/t1", "/metrics"} {
		if code := do(path, nil); code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", path, code)
		}
		if code := do(path, map[string]string{"Authorization": "Bearer wrong"}); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d", path, code)
		}
		for _, h := range []map[string]string{
			{"Authorization": "Bearer r34d"},
			{"Authorization": "Bearer 1ngest"},
			{"Authorization": "Basic " + basic("anyone", "r34d")},
			{"X-Auth-User": "alice"},
		} {
			if code := do(path, h); code != http.StatusOK {
				t.Errorf("%s with %v: %d", path, h, code)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code := do(path, nil); code != http.StatusOK {
			t.Errorf("%s must stay open: %d", path, code)
		}
	}
}

// With no read token and no trusted header, reading is closed unless the
// operator opened it on purpose: a refused reader is told which settings
// open it; the ingest token still reads; health probes stay open.
func TestReadClosedWithoutAReadToken(t *testing.T) {
	get := func(srv *httptest.Server, path string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	closed, _, _, _ := setup(t, Options{IngestToken: "1ngest"})
	open, _, _, _ := setup(t, Options{ReadOpen: true})
	for _, path := range []string{"/", "/api/v1/tasks", "/api/v1/tasks/t1", "/api/v1/stats", "/metrics"} {
		code, body := get(closed, path, nil)
		if code != http.StatusUnauthorized || !strings.Contains(body, "http.read_token") || !strings.Contains(body, "REDFIX_READ_TOKEN") || !strings.Contains(body, "http.read_open") {
			t.Errorf("%s, nothing configured: %d %s, want 401 naming http.read_token, REDFIX_READ_TOKEN and http.read_open", path, code, body)
		}
		if code, _ := get(closed, path, map[string]string{"Authorization": "Bearer 1ngest"}); code != http.StatusOK {
			t.Errorf("%s with the ingest token: %d", path, code)
		}
		if code, _ := get(closed, path, map[string]string{"X-Auth-User": "alice"}); code != http.StatusUnauthorized {
			t.Errorf("%s with a user header nobody configured: %d", path, code)
		}
		if code, body := get(open, path, nil); code != http.StatusOK {
			t.Errorf("%s, read_open: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := get(closed, path, nil); code != http.StatusOK {
			t.Errorf("%s must stay open: %d", path, code)
		}
	}
}

func basic(user, pw string) string {
	req, _ := http.NewRequest("GET", "http://x", nil)
	req.SetBasicAuth(user, pw)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

func TestTokenEqual(t *testing.T) {
	if !tokenEqual("abc", "abc") || tokenEqual("abc", "abd") || tokenEqual("", "abc") || tokenEqual("abcd", "abc") {
		t.Fatal("tokenEqual is wrong")
	}
}

// A body trickled one byte at a time is cut off once the read timeout
// passes; the connection does not stay open for good.
func TestSlowBodyIsCutOff(t *testing.T) {
	_, _, _, s := setup(t, Options{})
	srv := HTTPServer(s.Handler(), Timeouts{ReadHeader: time.Second, Read: 1500 * time.Millisecond, Write: 5 * time.Second, Idle: 5 * time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/reports?repo=/r&commit=abc HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
	testsvc.Poll(t, 30*time.Second, "the server cuts off a body trickled one byte at a time", func() bool {
		if _, err := conn.Write([]byte("{")); err != nil {
			return true // the server closed the connection
		}
		// The server may also answer before closing: a response ends it.
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := bufio.NewReader(conn).ReadString('\n')
		return err == nil || !isTimeout(err)
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
