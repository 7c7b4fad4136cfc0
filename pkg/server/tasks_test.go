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
	srv := httptest.NewServer(New(&recordingIntake{}, st, prometheus.NewRegistry(), Options{ReadOpen: true}, zaptest.NewLogger(t)).Handler())
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

// The task API shows a task's rounds: the task itself with each round's
// gates, patch and trajectory; the listing with what ended each round
// (verdicts, gates' verdicts, steps) and none of the bulk.
func TestTaskRounds(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "rounds-test")
	tk := task.Task{ID: "t1", Repo: "https://github.com/acme/shop", Commit: "abc123", Status: task.StatusNoPatch,
		Reason: "round 1 rejected by revert: reverts the blame; round 2: the agent's last change does not pass the failing tests",
		Rounds: []task.Round{
			{Attempt: 1, Candidate: 1, N: 1, Steps: 14, Stop: "exit", Verdict: task.RoundRejected, Reason: "rejected by revert",
				Gates:      []task.Gate{{Name: "revert", Verdict: task.GateFail, Detail: "REVERT-DETAIL"}, {Name: "static", Verdict: task.GatePass, Detail: "STATIC-DETAIL"}},
				Patch:      "PATCH-ONE",
				Trajectory: `{"step":"TRAJECTORY-ONE"}` + "\n"},
			{Attempt: 1, Candidate: 1, N: 2, Steps: 1, Stop: "exit", Verdict: task.RoundTestsFail, Reason: "the agent's last change does not pass the failing tests",
				Patch: "PATCH-TWO", Trajectory: `{"policy":"gates"}` + "\n"},
		},
	}
	if err := st.SaveTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(&recordingIntake{}, st, prometheus.NewRegistry(), Options{ReadOpen: true}, zaptest.NewLogger(t)).Handler())
	defer srv.Close()
	read := func(path string, v any) string {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, b)
		}
		return string(b)
	}

	var one task.Task
	body := read("/api/v1/tasks/t1", &one)
	for _, want := range []string{`"rounds":`, "REVERT-DETAIL", "PATCH-ONE", "PATCH-TWO", "TRAJECTORY-ONE", `"tests_fail"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the task does not hold %s:\n%s", want, body)
		}
	}
	if len(one.Rounds) != 2 || one.Rounds[0].Gates[0].Name != "revert" || one.Rounds[1].N != 2 {
		t.Errorf("the task's rounds: %+v", one.Rounds)
	}

	var list []task.Task
	body = read("/api/v1/tasks", &list)
	for _, bulk := range []string{"REVERT-DETAIL", "STATIC-DETAIL", "PATCH-ONE", "PATCH-TWO", "TRAJECTORY-ONE", "gates\\\""} {
		if strings.Contains(body, bulk) {
			t.Errorf("the listing holds %s:\n%s", bulk, body)
		}
	}
	if len(list) != 1 || len(list[0].Rounds) != 2 {
		t.Fatalf("listing: %s", body)
	}
	r := list[0].Rounds[0]
	if r.Verdict != task.RoundRejected || r.Steps != 14 || len(r.Gates) != 2 || r.Gates[0].Name != "revert" || r.Gates[0].Verdict != task.GateFail || r.Reason != "rejected by revert" {
		t.Errorf("the listing's round 1: %+v", r)
	}
	if !strings.Contains(list[0].Reason, "round 1 rejected by revert") {
		t.Errorf("the listing's reason: %q", list[0].Reason)
	}
}
