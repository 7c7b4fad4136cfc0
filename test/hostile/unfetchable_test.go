package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
)

// TestServiceParksUnfetchableReports: 300 reports of repositories that a
// git daemon does not serve (it answers them in words of its own), then a
// report of one it does serve. The real one is triaged within two minutes
// of its report, however the 300 fare meanwhile: a report waiting for its
// next try takes no place in the intake. The 300 end parked with the
// reason, after a few tries each.
func TestServiceParksUnfetchableReports(t *testing.T) {
	t.Parallel()
	confined(t)
	w := newWorld(t)
	base := t.TempDir()
	real := buildRepo(t, "test-written", filepath.Join(base, "real"), w.values)
	d := testsvc.StartGitDaemon(t, base)
	realURL := d.URL("real")
	// No worker: triage is what is measured. The retry delay is the
	// default's, as in production.
	s := startStackWith(t, w, false, stackOptions{
		allow:    []string{strings.TrimSuffix(realURL, "real") + "*"},
		triage:   "{reruns: 2, max_groups_per_report: 5, concurrency: 2}",
		noWorker: true,
		// Their fixes would be pushed to the daemon: a way to deliver.
		gitRemotes: []string{strings.TrimSuffix(realURL, "real")},
	})

	const ghosts = 300
	for i := range ghosts {
		if code, answer := s.post(d.URL(fmt.Sprintf("missing-%d", i)), real.Head(), goTestReport("example.com/calc", addFails)); code != http.StatusAccepted {
			t.Fatalf("report %d: %d %s", i, code, answer)
		}
	}
	if code, answer := s.post(realURL, real.Head(), goTestReport("example.com/calc", addFails)); code != http.StatusAccepted {
		t.Fatalf("real report: %d %s", code, answer)
	}
	sent := time.Now()
	testsvc.PollSeeing(t, 2*time.Minute, "the real report is triaged (a task of it is stored)", func() string {
		return fmt.Sprintf("parked %s; recent failures %.600s", s.parked(), s.get("/api/v1/stats"))
	}, func() bool { return len(s.tasksOf(realURL)) > 0 })
	t.Logf("the real report was triaged %s after it was sent, behind %d reports of unfetchable repositories (parked meanwhile: %s)",
		time.Since(sent).Round(time.Second), ghosts, s.parked())

	testsvc.PollSeeing(t, 5*time.Minute, "the reports of missing repositories are all parked", s.parked, func() bool {
		return s.parked() == fmt.Sprint(ghosts)
	})
	var stats struct {
		Failures []struct {
			Repo   string `json:"repo"`
			Reason string `json:"reason"`
		} `json:"recent_triage_failures"`
	}
	if err := json.Unmarshal([]byte(s.get("/api/v1/stats")), &stats); err != nil {
		t.Fatal(err)
	}
	if len(stats.Failures) == 0 {
		t.Fatal("no triage failure recorded for the parked reports")
	}
	for _, f := range stats.Failures {
		if !strings.HasPrefix(f.Repo, "missing-") || !strings.Contains(f.Reason, "could not be fetched") || !strings.Contains(f.Reason, "after 3 attempts") {
			t.Errorf("a parked report's failure: %s: %q, want the repository and why it was parked", f.Repo, f.Reason)
		}
	}
	if !s.bot.Alive() {
		t.Fatal("the bot died")
	}
	if l := w.leaks(s.outputs()); len(l) > 0 {
		t.Errorf("leaked: %s", strings.Join(l, "; "))
	}
}

// parked is the bot's count of parked reports, as /metrics says it.
func (s *stack) parked() string {
	for _, l := range strings.Split(s.get("/metrics"), "\n") {
		if v, ok := strings.CutPrefix(l, `redfix_parked_messages{stream="reports"} `); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// tasksOf lists the tasks of the repository at url.
func (s *stack) tasksOf(url string) []apiTask {
	s.t.Helper()
	var all []apiTask
	if err := json.Unmarshal([]byte(s.get("/api/v1/tasks")), &all); err != nil {
		s.t.Fatalf("tasks API: %v", err)
	}
	var out []apiTask
	for _, tk := range all {
		if tk.Repo == url {
			out = append(out, tk)
		}
	}
	return out
}
