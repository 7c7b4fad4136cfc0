package github

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sleeper waits for d or until ctx is done. Tests inject one that records
// the waits instead of taking them.
type Sleeper func(ctx context.Context, d time.Duration) error

// Sleep is the real Sleeper.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retry is an http.RoundTripper that retries what GitHub asks to be retried:
// secondary rate limits (403 or 429 with Retry-After, or with no requests
// left until x-ratelimit-reset) and server errors (5xx), with the same
// request, a bounded number of times, never waiting longer than MaxWait.
type Retry struct {
	Base http.RoundTripper // nil: http.DefaultTransport
	// Attempts is the most tries a request gets (first included); 0 means 5.
	Attempts int
	// MaxWait is the longest single wait; an answer asking for more is
	// returned as is (the caller sees the rate limit). 0 means 2 minutes.
	MaxWait time.Duration
	// Backoff is the first wait after a server error, doubled each time;
	// 0 means 1 s.
	Backoff time.Duration
	Sleep   Sleeper          // nil: Sleep
	Now     func() time.Time // nil: time.Now
	// OnRetry, when set, is told of each retry (for logs and metrics).
	OnRetry func(req *http.Request, status int, wait time.Duration)
}

// RoundTrip sends req, retrying as described on Retry.
func (t *Retry) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	attempts := t.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	maxWait := t.MaxWait
	if maxWait <= 0 {
		maxWait = 2 * time.Minute
	}
	backoff := t.Backoff
	if backoff <= 0 {
		backoff = time.Second
	}
	sleep := t.Sleep
	if sleep == nil {
		sleep = Sleep
	}
	now := t.Now
	if now == nil {
		now = time.Now
	}
	// The body must be sent again on a retry.
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		req.Body, _ = req.GetBody()
	}
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("replay request body: %w", err)
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		resp, err := base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		wait, retry := retryAfter(resp, now(), backoff<<(attempt-1))
		if !retry || attempt >= attempts || wait > maxWait {
			return resp, nil
		}
		// Drain so the connection is reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if t.OnRetry != nil {
			t.OnRetry(req, resp.StatusCode, wait)
		}
		if err := sleep(req.Context(), wait); err != nil {
			return nil, fmt.Errorf("%s %s: waiting to retry after %d: %w", req.Method, req.URL.Path, resp.StatusCode, err)
		}
	}
}

// retryAfter says whether resp asks for a retry, and after how long.
func retryAfter(resp *http.Response, now time.Time, backoff time.Duration) (time.Duration, bool) {
	switch {
	case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented:
		if d, ok := headerWait(resp.Header, now); ok {
			return d, true
		}
		return backoff, true
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
		if d, ok := headerWait(resp.Header, now); ok {
			return d, true
		}
		return 0, false // a plain 403 is a permission problem: not retried
	}
	return 0, false
}

// headerWait reads Retry-After, else x-ratelimit-reset when no request is
// left.
func headerWait(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(at.Sub(now), 0), true
		}
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			// A second more: the reset is rounded down to the second.
			return max(time.Unix(reset, 0).Sub(now), 0) + time.Second, true
		}
	}
	return 0, false
}
