package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// The task listing applies its filters against the store, newest first,
// and refuses a filter it cannot apply with a 400 that says why.
func TestTaskListFilters(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "tasks-test")
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	const shop, calc = "https://github.com/acme/shop", "https://github.com/acme/calc"
	for i, c := range []struct {
		repo string
		st   task.Status
	}{
		{shop, task.StatusQueued}, {calc, task.StatusQueued}, {shop, task.StatusPublished},
		{shop, task.StatusQueued}, {calc, task.StatusNoPatch},
	} {
		tk := task.Task{ID: fmt.Sprint("t", i), Repo: c.repo, Commit: "abc123", Status: c.st, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := st.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	// 150 more, so that the default limit shows.
	for i := range 150 {
		tk := task.Task{ID: fmt.Sprint("bulk", i), Repo: "https://github.com/acme/bulk", Commit: "abc123", Status: task.StatusDropped, CreatedAt: base.Add(-time.Duration(i+1) * time.Minute)}
		if err := st.SaveTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(&recordingIntake{}, st, prometheus.NewRegistry(), Options{}, zaptest.NewLogger(t)).Handler())
	defer srv.Close()

	get := func(query string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/api/v1/tasks" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	ids := func(query string) string {
		t.Helper()
		code, body := get(query)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", query, code, body)
		}
		var ts []task.Task
		if err := json.Unmarshal([]byte(body), &ts); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tk := range ts {
			out = append(out, tk.ID)
		}
		if len(out) > 6 {
			return fmt.Sprintf("%d tasks", len(out))
		}
		return strings.Join(out, " ")
	}
	for query, want := range map[string]string{
		"":                           "100 tasks",
		"?limit=3":                   "t4 t3 t2",
		"?limit=1000":                "155 tasks",
		"?status=queued":             "t3 t1 t0",
		"?status=queued&limit=1":     "t3",
		"?repo=" + shop:              "t3 t2 t0",
		"?repo=" + calc + "&limit=1": "t4",
		// A repository as reports may name it: canonicalized the same way.
		"?repo=https://github.com/acme/shop.git": "t3 t2 t0",
		"?repo=" + shop + "&status=published":    "t2",
		"?repo=" + calc + "&status=published":    "",
		"?status=failed":                         "",
	} {
		if got := ids(query); got != want {
			t.Errorf("GET /api/v1/tasks%s = %q, want %q", query, got, want)
		}
	}
	for query, reason := range map[string]string{
		"?limit=0":                     "limit",
		"?limit=1001":                  "limit",
		"?limit=ten":                   "limit",
		"?status=done":                 `status "done" is not one of`,
		"?repo=ftp://x":                "repo",
		"?repository=" + shop:          `unknown parameter "repository"`,
		"?status=queued&status=failed": "give status once",
	} {
		code, body := get(query)
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal([]byte(body), &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error, reason) {
			t.Errorf("GET /api/v1/tasks%s = %d %s, want 400 saying %q", query, code, body, reason)
		}
	}
}
