package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/report"
)

// Triage takes the report as the intake parsed it: a submission whose raw
// report the parser rejects is triaged from its parsed form, while the same
// submission without one is refused as invalid, which shows that triage
// parsed nothing itself.
func TestTriageDoesNotParseAgain(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg, err := config.Load("", func(k string) string {
		return map[string]string{"REDFIX_DATA_DIR": dir, "REDFIX_ALLOW_REPOS": "/srv/repo"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	sys, err := Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	work, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sys.RunTriage(work, cfg, nil) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("triage loop: %v", err)
		}
	}()

	raw := []byte("<<< not a report that any parser accepts >>>")
	parsed := ingest.Submission{ID: "parsed-once", Repo: "/srv/repo", Commit: "abc123", Report: raw,
		Parsed: ingest.ForTriage(report.Result{Format: "go-test-json", Total: 3})}
	unparsed := ingest.Submission{ID: "not-parsed", Repo: "/srv/repo", Commit: "abc123", Report: raw}
	waitParsed, waitUnparsed := sys.Expect("parsed-once"), sys.Expect("not-parsed")
	for _, s := range []ingest.Submission{parsed, unparsed} {
		if _, err := sys.Intake.Submit(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if tasks, err := waitParsed.Wait(ctx); err != nil || len(tasks) != 0 {
		t.Errorf("parsed submission: tasks %v, err %v; want triaged, nothing failing", tasks, err)
	}
	if _, err := waitUnparsed.Wait(ctx); err == nil || !strings.Contains(err.Error(), "invalid submission") {
		t.Errorf("unparsed submission: %v, want the parser's rejection", err)
	}
}

// The triage of each report is timed: redfix_triage_duration_seconds has
// one triaged sample per report triaged.
func TestTriageDurationObserved(t *testing.T) {
	sys, cfg := startSystem(t, map[string]string{"REDFIX_ALLOW_REPOS": "/srv/repo"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	work, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sys.RunTriage(work, cfg, nil) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("triage loop: %v", err)
		}
	}()
	for _, id := range []string{"r1", "r2"} {
		s := ingest.Submission{ID: id, Repo: "/srv/repo", Commit: "abc123", Report: []byte("{}"),
			Parsed: ingest.ForTriage(report.Result{Format: "go-test-json", Total: 3})}
		wait := sys.Expect(id)
		if _, err := sys.Intake.Submit(ctx, s); err != nil {
			t.Fatal(err)
		}
		if _, err := wait.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h := gathered(t, sys.Registry, "redfix_triage_duration_seconds", "result", "triaged")
	if n := h.GetHistogram().GetSampleCount(); n != 2 {
		t.Errorf("%d triaged samples, want one per report (2)", n)
	}
}
