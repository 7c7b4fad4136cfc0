package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/ingest"
)

// A report parked after its last retry is listed by `bot replay --list`,
// put back on its stream by `bot replay`, and then triaged like any other.
func TestReplayCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("REDFIX_DATA_DIR", dir)
	t.Setenv("REDFIX_LOG_LEVEL", "error")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := config.Load("", func(k string) string { return map[string]string{"REDFIX_DATA_DIR": dir}[k] })
	if err != nil {
		t.Fatal(err)
	}

	sys, err := Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	sub := ingest.Submission{ID: "parked-report", Repo: "/srv/repo", Commit: "abc123", Report: []byte(`{"Action":"pass","Package":"p"}`)}
	if _, err := sys.Intake.Submit(ctx, sub); err != nil {
		t.Fatal(err)
	}
	d, err := sys.Intake.Stream().Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Park(ctx, "redis unavailable for 24h"); err != nil {
		t.Fatal(err)
	}
	sys.Close()

	var out, errOut bytes.Buffer
	if err := Replay(ctx, []string{"--list"}, &out, &errOut); err != nil {
		t.Fatalf("replay --list: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), `"msg_id":"parked-report"`) || !strings.Contains(out.String(), "redis unavailable") {
		t.Fatalf("replay --list printed %q", out.String())
	}
	out.Reset()
	if err := Replay(ctx, []string{"--id", "parked-report"}, &out, &errOut); err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "replayed 1 ") {
		t.Fatalf("replay printed %q", out.String())
	}
	out.Reset()
	if err := Replay(ctx, []string{"--list"}, &out, &errOut); err != nil || out.Len() != 0 {
		t.Fatalf("after replay, --list printed %q (%v)", out.String(), err)
	}

	// The replayed report is back on its stream, under its own ID.
	sys, err = Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	d, err = sys.Intake.Stream().Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d.Data()), `"id":"parked-report"`) {
		t.Fatalf("replayed message %s", d.Data())
	}
}
