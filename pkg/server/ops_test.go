package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redfix/redfix/pkg/config"
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

// The bot's /readyz says what is wrong, as a worker's does, and what the
// sandbox gives; probes of a bot that is not ready do not each log an error
// with a stack trace (the shipped JSON logger adds one to every error): one
// warning with the cause when readiness is lost, a line when it is back.
func TestBotReadyzSaysTheCauseAndLogsOnlyChanges(t *testing.T) {
	var logs bytes.Buffer
	log, err := config.Log{Level: "info", Format: "json"}.Build(&logs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	down.Store(true)
	s := New(&recordingIntake{}, memTasks{}, prometheus.NewRegistry(), Options{
		Ready: func(context.Context) error {
			if down.Load() {
				return errors.New("redis at 10.0.0.7:6379: dial tcp 10.0.0.7:6379: connect: connection refused")
			}
			return nil
		},
		Sandbox: func() string { return "bubblewrap, user namespace" },
	}, log)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for range 3 {
		if code, body := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable || body != "not ready: redis at 10.0.0.7:6379: dial tcp 10.0.0.7:6379: connect: connection refused\n" {
			t.Fatalf("/readyz while Redis is down: %d %q", code, body)
		}
	}
	down.Store(false)
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusOK || body != "ready\nsandbox: bubblewrap, user namespace\n" {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	_ = log.Sync()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		if m["msg"] != "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 || lines[0]["level"] != "warn" || !strings.Contains(fmt.Sprint(lines[0]["error"]), "connection refused") || lines[1]["msg"] != "ready again" {
		t.Errorf("log of three failed probes and one that passed: %s", logs.String())
	}
	if strings.Contains(logs.String(), "stacktrace") || strings.Contains(logs.String(), `"level":"error"`) {
		t.Errorf("a probe logged an error or a stack trace: %s", logs.String())
	}
}
