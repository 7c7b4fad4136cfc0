package app

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/ingest"
)

// The reports waiting for triage are a gauge, with the oldest one's age;
// only the bot's cluster metrics carry them.
func TestTriageBacklogGauge(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := config.Load("", func(k string) string { return map[string]string{"REDFIX_DATA_DIR": dir}[k] })
	if err != nil {
		t.Fatal(err)
	}
	sys, err := Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	for _, id := range []string{"r1", "r2", "r3"} {
		sub := ingest.Submission{ID: id, Repo: "/srv/repo", Commit: "abc123", Report: []byte(`{"Action":"pass","Package":"p"}`)}
		if _, err := sys.Intake.Submit(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := testutil.GatherAndCount(sys.Registry, "redfix_triage_backlog_reports"); err != nil || n != 0 {
		t.Fatalf("before the cluster metrics are registered: gauge count %d, %v", n, err)
	}
	sys.RegisterClusterMetrics()
	sys.RegisterClusterMetrics() // a second call changes nothing
	n, err := testutil.GatherAndCount(sys.Registry, "redfix_triage_backlog_reports")
	if err != nil || n != 1 {
		t.Fatalf("gauge count %d, %v", n, err)
	}
	mfs, err := sys.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "redfix_triage_backlog_reports" {
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 3 {
				t.Errorf("backlog = %v, want 3", v)
			}
		}
		if mf.GetName() == "redfix_triage_oldest_report_age_seconds" {
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v < 0 || v > time.Minute.Seconds() {
				t.Errorf("oldest report's age = %vs, want the seconds since this test stored it", v)
			}
		}
	}
}
