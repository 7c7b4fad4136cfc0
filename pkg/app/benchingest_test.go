package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
)

// bot bench-ingest in short: real nats-server and redis-server, reports
// posted to the ingest API and the same bytes published to JetStream; every
// one accepted or acknowledged, both rows and the ratio printed. Its
// figures are read by people, never asserted.
func TestBenchIngestSmoke(t *testing.T) {
	testsvc.Need(t, "nats-server", "nats-server")
	testsvc.Need(t, "redis-server", "redis-server")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errs bytes.Buffer
	if err := BenchIngest(ctx, []string{"--reports", "40", "--warmup", "8", "--concurrency", "4"}, &out, &errs); err != nil {
		t.Fatalf("bench-ingest: %v\n%s\n%s", err, out.String(), errs.String())
	}
	for _, want := range []string{
		"40 reports of ", "| ingest API (POST /api/v1/reports) | 40 | 0 |", "| JetStream publish, same bytes | 40 | 0 |", "ingest API / JetStream: ",
		"CPU per report (µs, user and system):", "| path | redfix (handler and client) | nats-server | redis-server | all |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}
