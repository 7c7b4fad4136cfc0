package ghtest

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// recorder keeps the errors the server reports instead of failing the test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) got() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

func TestRequestsAreCheckedAgainstGitHubsDescription(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec)
	s.AddToken("tok", "octo")
	call := func(method, path, body string) int {
		req, _ := http.NewRequest(method, s.URL+APIPrefix+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// A pull request without its required head and base.
	if st := call("POST", "/repos/acme/widgets/pulls", `{"title":"x"}`); st != 422 {
		t.Errorf("invalid body: status %d", st)
	}
	if !strings.Contains(rec.got(), "does not match GitHub's description") {
		t.Errorf("invalid request not reported: %q", rec.got())
	}
	rec.errs = nil
	if st := call("GET", "/repos/acme/widgets/no-such-thing", ""); st != 404 || !strings.Contains(rec.got(), "no such endpoint") {
		t.Errorf("unknown endpoint: status %d, reported %q", st, rec.got())
	}
	rec.errs = nil
	if st := call("GET", "/repos/acme/widgets/pulls/1/commits", ""); st != 501 || !strings.Contains(rec.got(), "does not implement") {
		t.Errorf("unimplemented endpoint: status %d, reported %q", st, rec.got())
	}
	rec.errs = nil
	if st := call("GET", "/repos/acme/widgets/stargazers", ""); st != 404 || !strings.Contains(rec.got(), "DescribedPrefixes") {
		t.Errorf("endpoint outside the described part: status %d, reported %q", st, rec.got())
	}
	rec.errs = nil
	// A handler whose answer GitHub would never give.
	s.Handle("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", func(r *Request) Reply {
		return JSON(200, map[string]any{"number": "not a number"})
	})
	call("GET", "/repos/acme/widgets/pulls/1", "")
	if !strings.Contains(rec.got(), "response (200) does not match") {
		t.Errorf("invalid response not reported: %q", rec.got())
	}
	rec.errs = nil
	// Refs with slashes reach their operation.
	if st := call("DELETE", "/repos/acme/widgets/git/refs/heads/redfix/abc", ""); st != 404 || rec.got() != "" {
		t.Errorf("delete ref with slashes: status %d, reported %q", st, rec.got())
	}
	// No credentials, no answer.
	req, _ := http.NewRequest("GET", s.URL+APIPrefix+"/repos/acme/widgets", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("no credentials: %d", resp.StatusCode)
	}
}
