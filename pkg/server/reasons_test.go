package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// A reason that is a tool's whole usage text (about 100 lines) fills no
// cell of the dashboard: the page shows its start on one line, cut and
// marked; the task and /api/v1/stats keep it whole.
func TestDashboardClipsReasonsTheTaskKeepsThemWhole(t *testing.T) {
	ctx := context.Background()
	st := store.New(embeddedtest.Redis(t), "reasons")
	var usage strings.Builder
	usage.WriteString("cannot run its tests: the node setup failed: npm ci exited with status 1:\n")
	for i := range 100 {
		usage.WriteString("  --option-" + strings.Repeat("x", i%7) + "   what the option does, in the tool's own words\n")
	}
	usage.WriteString("END-OF-USAGE\n")
	long := usage.String()
	if err := st.SaveTask(ctx, task.Task{ID: "t-long", Fingerprint: "fp", Status: task.StatusFailed, Reason: long}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordTriageFailure(ctx, series.TriageFailure{Submission: "s1", Repo: "acme/shop", Class: "gave_up", Reason: long, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(&recordingIntake{}, st, prometheus.NewRegistry(), Options{ReadOpen: true, History: st}, zaptest.NewLogger(t)).Handler())
	defer srv.Close()

	_, page := get(t, srv.URL+"/")
	if strings.Contains(page, "END-OF-USAGE") || strings.Count(page, "--option-") > 2*12 {
		t.Errorf("the page shows the whole reason (%d option lines)", strings.Count(page, "--option-"))
	}
	if n := strings.Count(page, "cannot run its tests: the node setup failed: npm ci exited with status 1: --option-"); n != 2 {
		t.Errorf("the reason's start on one line, in the recent tasks and the triage failures: %d", n)
	}
	if !strings.Contains(page, "…") {
		t.Error("no cut marked")
	}
	if _, body := get(t, srv.URL+"/api/v1/tasks/t-long"); !strings.Contains(body, "END-OF-USAGE") {
		t.Error("the task lost the end of its reason")
	}
	if _, body := get(t, srv.URL+"/api/v1/stats"); !strings.Contains(body, "END-OF-USAGE") {
		t.Error("/api/v1/stats lost the end of the triage failure's reason")
	}
}
