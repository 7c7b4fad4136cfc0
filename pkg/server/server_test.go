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
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/task"
)

// recordingIntake keeps what was submitted, like a stream would.
type recordingIntake struct {
	mu   sync.Mutex
	subs []ingest.Submission
	seen map[string]bool
	err  error
}

func (r *recordingIntake) Submit(_ context.Context, s ingest.Submission) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return false, r.err
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	dup := r.seen[s.ID]
	r.seen[s.ID] = true
	if !dup {
		s.Report = bytes.Clone(s.Report) // the server reuses its buffer
		r.subs = append(r.subs, s)
	}
	return dup, nil
}

type memTasks map[string]task.Task

func (m memTasks) GetTask(_ context.Context, id string) (task.Task, error) {
	t, ok := m[id]
	if !ok {
		return task.Task{}, fmt.Errorf("get task %s: %w", id, task.ErrNotFound)
	}
	return t, nil
}

func (m memTasks) FindTasks(_ context.Context, f task.Filter) ([]task.Task, error) {
	var out []task.Task
	for _, t := range m {
		if (f.Status == "" || t.Status == f.Status) && (f.Repo == "" || t.Repo == f.Repo) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (m memTasks) CountByStatus(context.Context) (map[task.Status]int64, error) {
	c := map[task.Status]int64{}
	for _, t := range m {
		c[t.Status]++
	}
	return c, nil
}

const goodReport = `{"Action":"run","Package":"example.com/m/a","Test":"TestX"}
{"Action":"output","Package":"example.com/m/a","Test":"TestX","Output":"    a_test.go:9: got 1, want 2\n"}
{"Action":"fail","Package":"example.com/m/a","Test":"TestX","Elapsed":0}
{"Action":"fail","Package":"example.com/m/a","Elapsed":0}
`

func setup(t *testing.T, opts Options) (*httptest.Server, *recordingIntake, *observer.ObservedLogs, *Server) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	in := &recordingIntake{}
	if opts.Allow == nil {
		opts.Allow = mustAllow(t, "/r")
	}
	tasks := memTasks{"t1": {ID: "t1", Status: task.StatusPublished, Failures: []task.Failure{{Test: "TestX", Output: "long"}}, PullRequest: "file:///pr"}}
	s := New(in, tasks, prometheus.NewRegistry(), opts, zap.New(core))
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, in, logs, s
}

func post(t *testing.T, url, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

func TestPostReportAcceptsAndStores(t *testing.T) {
	srv, in, _, s := setup(t, Options{})
	code, out := post(t, srv.URL+"/api/v1/reports?repo=/r&commit=abc&good=def", goodReport, nil)
	if code != http.StatusAccepted || out["format"] != "go-test-json" || out["duplicate"] != false {
		t.Fatalf("code %d, body %v", code, out)
	}
	if len(in.subs) != 1 || in.subs[0].Repo != "/r" || in.subs[0].Good != "def" || in.subs[0].ID == "" {
		t.Fatalf("submitted %+v", in.subs)
	}
	// Screened, not parsed: the raw report goes alone, triage parses it.
	if p := in.subs[0].Parsed; p != nil || string(in.subs[0].Report) != goodReport {
		t.Fatalf("submitted parsed %+v, raw %d bytes", p, len(in.subs[0].Report))
	}
	code, out = post(t, srv.URL+"/api/v1/reports?repo=/r&commit=abc&good=def", goodReport, nil)
	if code != http.StatusAccepted || out["duplicate"] != true || len(in.subs) != 1 {
		t.Fatalf("resubmission: code %d, body %v, stored %d", code, out, len(in.subs))
	}
	if got := testutil.ToFloat64(s.reports.WithLabelValues("duplicate")); got != 1 {
		t.Fatalf("duplicate counter = %v", got)
	}
}

func TestPostReportRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		name, query, body string
		hdr               map[string]string
		code              int
		reason            string
	}{
		{"garbage", "repo=/r&commit=abc", "this is not a report", nil, 422, "unknown report format"},
		{"broken xml", "repo=/r&commit=abc", "<testsuites><testsuite", nil, 422, "junit"},
		{"broken json", "repo=/r&commit=abc", "{\"Action\":", nil, 422, "go test -json"},
		{"empty", "repo=/r&commit=abc", "", nil, 422, "empty"},
		{"no repo", "commit=abc", goodReport, nil, 400, "no repository"},
		{"no commit", "repo=/r", goodReport, nil, 400, "no commit"},
		{"misspelt parameter", "repo=/r&commit=abc&god=def", goodReport, nil, 400, `unknown parameter "god" (this route takes repo, commit, good, branch)`},
		{"unknown parameters", "repo=/r&commit=abc&sha=1&Branch=main", goodReport, nil, 400, `unknown parameters "branch", "sha"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, in, logs, _ := setup(t, Options{})
			code, out := post(t, srv.URL+"/api/v1/reports?"+c.query, c.body, c.hdr)
			msg, _ := out["error"].(string)
			if code != c.code || !strings.Contains(strings.ToLower(msg), c.reason) {
				t.Fatalf("code %d, error %q; want %d naming %q", code, msg, c.code, c.reason)
			}
			if len(in.subs) != 0 {
				t.Fatal("a rejected report was stored")
			}
			if logs.FilterMessage("request failed").Len() != 1 {
				t.Fatalf("want one log line for the rejection, got %v", logs.All())
			}
		})
	}
}

func TestPostReportNeedsTokenWhenConfigured(t *testing.T) {
	srv, in, _, _ := setup(t, Options{IngestToken: "s3cret"})
	if code, _ := post(t, srv.URL+"/api/v1/reports?repo=/r&commit=a", goodReport, nil); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := post(t, srv.URL+"/api/v1/reports?repo=/r&commit=a", goodReport, map[string]string{"Authorization": "Bearer s3cret"}); code != http.StatusAccepted {
		t.Fatalf("right token: %d", code)
	}
	if len(in.subs) != 1 {
		t.Fatalf("stored %d", len(in.subs))
	}
}

func TestPostReportStoreDownIs503(t *testing.T) {
	srv, in, _, _ := setup(t, Options{})
	in.err = fmt.Errorf("nats: no responders")
	if code, _ := post(t, srv.URL+"/api/v1/reports?repo=/r&commit=a", goodReport, nil); code != http.StatusServiceUnavailable {
		t.Fatalf("code %d, want 503 so CI retries", code)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestTasksDashboardHealth(t *testing.T) {
	srv, _, _, _ := setup(t, Options{ReadOpen: true, Ready: func(context.Context) error { return errors.New("redis down") }})
	if code, body := get(t, srv.URL+"/api/v1/tasks/t1"); code != 200 || !strings.Contains(body, "file:///pr") {
		t.Fatalf("task: %d %s", code, body)
	}
	if code, body := get(t, srv.URL+"/api/v1/tasks"); code != 200 || strings.Contains(body, "long") {
		t.Fatalf("listing should omit outputs: %d %s", code, body)
	}
	if code, _ := get(t, srv.URL+"/api/v1/tasks/nope"); code != 404 {
		t.Fatalf("missing task: %d", code)
	}
	if code, body := get(t, srv.URL+"/"); code != 200 || !strings.Contains(body, "published") || !strings.Contains(body, "100.0%") {
		t.Fatalf("dashboard: %d %s", code, body)
	}
	if code, _ := get(t, srv.URL+"/healthz"); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	if code, _ := get(t, srv.URL+"/readyz"); code != 503 {
		t.Fatalf("readyz with redis down: %d", code)
	}
	if code, body := get(t, srv.URL+"/metrics"); code != 200 || !strings.Contains(body, "redfix_http_request_duration_seconds") {
		t.Fatalf("metrics: %d", code)
	}
}

// The latency histogram names the route by its path pattern and the method
// in a label of its own.
func TestRouteLabelsSeparateTheMethod(t *testing.T) {
	srv, _, _, _ := setup(t, Options{ReadOpen: true})
	if code, _ := get(t, srv.URL+"/api/v1/tasks/t1"); code != 200 {
		t.Fatalf("task: %d", code)
	}
	if code, _ := post(t, srv.URL+"/api/v1/reports", "", nil); code != 400 {
		t.Fatalf("empty report: %d", code)
	}
	_, body := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`redfix_http_request_duration_seconds_count{code="2xx",method="GET",route="/api/v1/tasks/{id}"} 1`,
		`redfix_http_request_duration_seconds_count{code="4xx",method="POST",route="/api/v1/reports"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `route="GET `) || strings.Contains(body, `route="POST `) {
		t.Errorf("a route label still carries the method")
	}
}
