package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/task"
)

type memQuarantine []task.QuarantineEntry

func (m memQuarantine) Quarantined(_ context.Context, limit int) ([]task.QuarantineEntry, error) {
	return m[:min(limit, len(m))], nil
}

func TestQuarantineReport(t *testing.T) {
	seen := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	q := memQuarantine{
		{Test: "m/a.TestX", Repo: "r", Commit: "abc", Runs: 5, Failures: 2, FlakeRate: 0.1, FlakyCommits: 3, Reason: "flaky: 2/5 runs failed", SeenAt: seen},
		{Test: "m/a.TestY", Repo: "r", Commit: "abc", Runs: 5, Failures: 1, SeenAt: seen},
	}
	srv, _, _, _ := setup(t, Options{Quarantine: q, ReadOpen: true})
	for _, c := range []struct {
		query string
		code  int
		n     int
	}{{"", 200, 2}, {"?limit=1", 200, 1}, {"?limit=nope", 400, 0}, {"?limit=0", 400, 0}} {
		resp, err := http.Get(srv.URL + "/api/v1/quarantine" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Flaky []task.QuarantineEntry `json:"flaky_tests"`
			Error string                 `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != c.code || len(body.Flaky) != c.n {
			t.Errorf("%q: %d %+v %v, want %d with %d entries", c.query, resp.StatusCode, body, err, c.code, c.n)
		}
		if c.n > 0 && (body.Flaky[0].Failures != 2 || body.Flaky[0].FlakeRate != 0.1 || !body.Flaky[0].SeenAt.Equal(seen)) {
			t.Errorf("%q: first entry %+v", c.query, body.Flaky[0])
		}
	}
	// Without a quarantine configured, there is no such route.
	srv, _, _, _ = setup(t, Options{ReadOpen: true})
	resp, err := http.Get(srv.URL + "/api/v1/quarantine")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("no quarantine: status %d, want 404", resp.StatusCode)
	}
}
