package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A worker's ops endpoints: alive, ready with what its sandbox gives, not
// ready (503) while what it needs does not answer, and its metrics.
func TestOps(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "redfix_test_total", Help: "A counter."}))
	var notReady error
	h := Ops(reg, func(context.Context) error { return notReady }, func() string { return "bubblewrap" })
	get := func(path string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != http.StatusOK || body != "ready\nsandbox: bubblewrap\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "redfix_test_total 0") {
		t.Errorf("/metrics: %d %q", code, body)
	}
	notReady = errors.New("redis: connection refused")
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "connection refused") {
		t.Errorf("/readyz while not ready: %d %q", code, body)
	}
}
