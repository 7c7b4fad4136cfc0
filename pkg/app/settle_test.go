package app

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/report"
)

// A bot that serves keeps nothing per report triaged: settlements are held
// only for the submissions someone waits for, and only until the wait ends.
func TestSettlementsHeldOnlyForWaiters(t *testing.T) {
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
	submit := func(id string) {
		t.Helper()
		s := ingest.Submission{ID: id, Repo: "/srv/repo", Commit: "abc123", Report: []byte("{}"),
			Parsed: ingest.ForTriage(report.Result{Format: "go-test-json", Total: 3})}
		if _, err := sys.Intake.Submit(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	triaged := func() int {
		// Registered by the triage loop when it starts.
		if n, err := testutil.GatherAndCount(sys.Registry, "redfix_triage_reports_total"); err != nil || n == 0 {
			return 0
		}
		return int(gathered(t, sys.Registry, "redfix_triage_reports_total", "result", "triaged").GetCounter().GetValue())
	}

	// As `bot serve` runs: reports nobody waits for.
	const n = 40
	for i := range n {
		submit(fmt.Sprintf("unwatched-%d", i))
	}
	testsvc.Poll(t, 2*time.Minute, "every report is triaged", func() bool { return triaged() == n })
	if held := sys.waits.Held(); held != 0 {
		t.Fatalf("%d settlements held after %d reports that nobody waited for, want none", held, n)
	}

	// As the demo runs: the wait is registered before the report is sent.
	w := sys.Expect("watched")
	submit("watched")
	if tasks, err := w.Wait(ctx); err != nil || len(tasks) != 0 {
		t.Fatalf("watched report: tasks %v, err %v; want triaged, nothing failing", tasks, err)
	}
	if held := sys.waits.Held(); held != 0 {
		t.Fatalf("%d settlements held after the only wait ended, want none", held)
	}

	// A wait given up before its report is triaged leaves nothing behind.
	gone := sys.Expect("abandoned")
	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	if _, err := gone.Wait(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned wait: %v, want context.Canceled", err)
	}
	if held := sys.waits.Held(); held != 0 {
		t.Fatalf("%d settlements held after the wait was abandoned, want none", held)
	}
	submit("abandoned")
	testsvc.Poll(t, 2*time.Minute, "the abandoned report is triaged", func() bool { return triaged() == n+2 })
	if held := sys.waits.Held(); held != 0 {
		t.Fatalf("%d settlements held after a report whose wait was abandoned, want none", held)
	}
}

// gathered is the metric name{label="value"} as reg gathers it; the test
// fails when there is none.
func gathered(t *testing.T, reg prometheus.Gatherer, name, label, value string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q} gathered", name, label, value)
	return nil
}
