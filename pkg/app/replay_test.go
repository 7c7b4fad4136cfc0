package app

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/stream"
)

// replayRun runs `bot replay args` and returns its output.
func replayRun(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = Replay(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func parkedIDs(t *testing.T, jsonLines string) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(jsonLines), "\n") {
		if line == "" {
			continue
		}
		var p stream.Parked
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		ids = append(ids, p.MsgID)
	}
	return ids
}

// `bot replay` reads the NATS the bot uses: without one it refuses, on a
// server without the bot's streams it says so; without --all or --id it
// lists and changes nothing, --dry-run too; --id and --all replay, and
// none parked is said as "0 parked".
func TestReplayCommand(t *testing.T) {
	natsURL := tcpNATS(t)
	t.Setenv("REDFIX_DATA_DIR", t.TempDir())
	t.Setenv("REDFIX_LOG_LEVEL", "error")
	t.Setenv("REDFIX_NATS_URL", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// No NATS configured: an error, not an empty list.
	_, _, err := replayRun(t, ctx)
	if err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), "REDFIX_NATS_URL") {
		t.Fatalf("replay without a NATS server: %v (exit %d), want a usage error naming REDFIX_NATS_URL", err, ExitCode(err))
	}

	// A NATS server the bot never used: an error, not "0 parked".
	t.Setenv("REDFIX_NATS_URL", tcpNATS(t))
	_, stderr, err := replayRun(t, ctx)
	if err == nil || !strings.Contains(err.Error(), "not found") || strings.Contains(stderr, "0 parked") {
		t.Fatalf("replay on an empty server: %v\n%s", err, stderr)
	}

	// The bot's server, with two reports parked.
	t.Setenv("REDFIX_NATS_URL", natsURL)
	cfg, err := config.Load("", func(k string) string {
		return map[string]string{"REDFIX_NATS_URL": natsURL, "REDFIX_NATS_TOKEN": tcpNATSToken, "REDFIX_DATA_DIR": t.TempDir()}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	sys, err := Start(ctx, cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	for _, id := range []string{"parked-1", "parked-2"} {
		sub := ingest.Submission{ID: id, Repo: "/srv/repo", Commit: "abc123", Report: []byte(`{"Action":"pass","Package":"p"}`)}
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
	}
	parked := func() uint64 {
		n, err := sys.Intake.Stream().ParkedCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// No selection: lists, replays nothing. --list and --dry-run likewise.
	for _, args := range [][]string{nil, {"--list"}, {"--dry-run"}, {"--all", "--dry-run"}} {
		stdout, stderr, err := replayRun(t, ctx, args...)
		if err != nil {
			t.Fatalf("replay %v: %v\n%s", args, err, stderr)
		}
		if ids := parkedIDs(t, stdout); strings.Join(ids, ",") != "parked-1,parked-2" {
			t.Fatalf("replay %v listed %v", args, ids)
		}
		want := "2 parked on reports"
		if len(args) == 2 {
			want = "would replay 2 parked on reports"
		}
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, natsURL) {
			t.Fatalf("replay %v said %q, want %q and the server", args, stderr, want)
		}
		if n := parked(); n != 2 {
			t.Fatalf("replay %v changed the parked messages: %d left", args, n)
		}
	}
	stdout, _, err := replayRun(t, ctx, "--id", "parked-2", "--dry-run")
	if err != nil || strings.Join(parkedIDs(t, stdout), ",") != "parked-2" || parked() != 2 {
		t.Fatalf("--id --dry-run: %v, listed %q, %d parked", err, stdout, parked())
	}

	// --id replays that one; an unknown one is an error.
	if _, _, err := replayRun(t, ctx, "--id", "no-such"); err == nil || !strings.Contains(err.Error(), "nothing is parked") {
		t.Fatalf("--id of nothing parked: %v", err)
	}
	stdout, stderr, err = replayRun(t, ctx, "--id", "parked-2")
	if err != nil || !strings.HasPrefix(stdout, "replayed 1 ") || parked() != 1 {
		t.Fatalf("--id: %v, %q, %d parked\n%s", err, stdout, parked(), stderr)
	}
	// --all replays the rest.
	if _, _, err := replayRun(t, ctx, "--all", "--id", "parked-1"); err == nil || ExitCode(err) != 2 {
		t.Fatalf("--all with --id: %v", err)
	}
	stdout, _, err = replayRun(t, ctx, "--all")
	if err != nil || !strings.HasPrefix(stdout, "replayed 1 ") || parked() != 0 {
		t.Fatalf("--all: %v, %q, %d parked", err, stdout, parked())
	}
	for _, name := range []string{"reports", "jobs"} {
		stdout, stderr, err = replayRun(t, ctx, "--stream", name)
		if err != nil || stdout != "" || !strings.Contains(stderr, "0 parked on "+name) {
			t.Fatalf("--stream %s with none parked: %v, %q, %q", name, err, stdout, stderr)
		}
	}

	// The replayed reports are back on their stream, under their own IDs.
	var got []string
	for range 2 {
		d, err := sys.Intake.Stream().Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := ingest.Decode(d.Data(), d.Header())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sub.ID)
		if err := d.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, ",") != "parked-2,parked-1" {
		t.Fatalf("replayed %v, want parked-2 then parked-1", got)
	}
}
