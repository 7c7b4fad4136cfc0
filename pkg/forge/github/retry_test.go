package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

func TestServerErrorsAreRetried(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	sl := &sleeps{}
	c := tokenClients(t, srv, sl)
	srv.Inject("GET", "/repos/{owner}/{repo}", 2, ghtest.Fault{Status: 502})
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	if _, _, err := cl.Repositories.Get(context.Background(), "acme", "widgets"); err != nil {
		t.Fatal(err)
	}
	calls := srv.CallsTo("GET", "/repos/{owner}/{repo}")
	if len(calls) != 3 || calls[0].Status != 502 || calls[1].Status != 502 || calls[2].Status != 200 {
		t.Fatalf("calls %+v, want 502, 502, 200", calls)
	}
	if got := sl.got(); len(got) != 2 || got[0] != time.Second || got[1] != 2*time.Second {
		t.Errorf("waits %v, want [1s 2s]", got)
	}
}

func TestSecondaryRateLimitWaitsRetryAfter(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	sl := &sleeps{}
	c := tokenClients(t, srv, sl)
	srv.Inject("GET", "/repos/{owner}/{repo}", 1, ghtest.SecondaryRateLimit(7*time.Second))
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	if _, _, err := cl.Repositories.Get(context.Background(), "acme", "widgets"); err != nil {
		t.Fatal(err)
	}
	if got := sl.got(); len(got) != 1 || got[0] != 7*time.Second {
		t.Errorf("waits %v, want [7s]", got)
	}
	if calls := srv.CallsTo("GET", "/repos/{owner}/{repo}"); len(calls) != 2 || calls[0].Status != 403 || calls[1].Status != 200 {
		t.Errorf("calls %+v", calls)
	}
}

func TestRetriesAreBoundedAndStopWithTheContext(t *testing.T) {
	srv := ghtest.New(t)
	srv.CreateRepo("acme", "widgets", sampleRepo(t))
	sl := &sleeps{}
	c := tokenClients(t, srv, sl)
	srv.Inject("GET", "/repos/{owner}/{repo}", 5, ghtest.Fault{Status: 503})
	cl, _ := c.ForRepo(context.Background(), "acme", "widgets")
	_, resp, err := cl.Repositories.Get(context.Background(), "acme", "widgets")
	if err == nil || resp.StatusCode != 503 {
		t.Fatalf("after 5 faults: %v", err)
	}
	if n := len(srv.CallsTo("GET", "/repos/{owner}/{repo}")); n != 5 {
		t.Errorf("%d calls, want 5 (the bound)", n)
	}

	// A wait longer than MaxWait is not taken: the rate limit is returned.
	srv.Inject("GET", "/repos/{owner}/{repo}", 1, ghtest.SecondaryRateLimit(time.Hour))
	before := len(sl.got())
	if _, resp, err = cl.Repositories.Get(context.Background(), "acme", "widgets"); err == nil || resp.StatusCode != 403 {
		t.Fatalf("hour-long retry-after: %v", err)
	}
	if len(sl.got()) != before {
		t.Error("waited for an hour-long Retry-After")
	}

	// Cancelled while waiting: the call ends with the context's error.
	c2, err := github.New(github.Config{APIURL: srv.APIURL(), Token: "ghp_secret", Retry: github.Retry{Sleep: github.Sleep, Backoff: time.Hour, MaxWait: 2 * time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	cl2, _ := c2.ForRepo(context.Background(), "acme", "widgets")
	srv.Inject("GET", "/repos/{owner}/{repo}", 1, ghtest.Fault{Status: 502})
	seen := len(srv.CallsTo("GET", "/repos/{owner}/{repo}"))
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, _, err := cl2.Repositories.Get(ctx, "acme", "widgets")
		got <- err
	}()
	// Cancel once the 502 was answered: the client is then waiting.
	testsvc.Poll(t, 30*time.Second, "the client's first call is answered with 502", func() bool {
		return len(srv.CallsTo("GET", "/repos/{owner}/{repo}")) > seen
	})
	cancel()
	if err := testsvc.Receive(t, 30*time.Second, "the cancelled call returns", got); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestRetryAfterRateLimitReset(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var waited []time.Duration
	rt := &github.Retry{
		Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			if len(waited) == 0 {
				h.Set("X-Ratelimit-Remaining", "0")
				h.Set("X-Ratelimit-Reset", "1700000030")
				return &http.Response{StatusCode: 403, Header: h, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
		}),
		Now:   func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil },
	}
	req, _ := http.NewRequest("GET", "http://x/", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if len(waited) != 1 || waited[0] != 31*time.Second {
		t.Errorf("waited %v, want [31s] (reset + 1 s)", waited)
	}
}

func TestWhatIsNotRetried(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for name, c := range map[string]struct {
		status int
		header map[string]string
		want   []time.Duration
	}{
		"plain 403 (a permission)": {status: 403, want: nil},
		"404":                      {status: 404, want: nil},
		"501":                      {status: 501, want: nil},
		"429 with an HTTP date":    {status: 429, header: map[string]string{"Retry-After": now.Add(9 * time.Second).UTC().Format(http.TimeFormat)}, want: []time.Duration{9 * time.Second}},
		"403 primary limit, reset": {status: 403, header: map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1700000004"}, want: []time.Duration{5 * time.Second}},
		"403 with requests left":   {status: 403, header: map[string]string{"X-Ratelimit-Remaining": "12", "X-Ratelimit-Reset": "1700000004"}, want: nil},
	} {
		t.Run(name, func(t *testing.T) {
			var waited []time.Duration
			calls := 0
			rt := &github.Retry{
				Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					calls++
					h := http.Header{}
					if calls == 1 {
						for k, v := range c.header {
							h.Set(k, v)
						}
						return &http.Response{StatusCode: c.status, Header: h, Body: http.NoBody, Request: r}, nil
					}
					return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
				}),
				Now:   func() time.Time { return now },
				Sleep: func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil },
			}
			req, _ := http.NewRequest("POST", "http://x/", strings.NewReader(`{"a":1}`))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(waited) != fmt.Sprint(c.want) {
				t.Errorf("waited %v, want %v", waited, c.want)
			}
			if (c.want == nil) != (resp.StatusCode == c.status) {
				t.Errorf("final status %d", resp.StatusCode)
			}
		})
	}
}
