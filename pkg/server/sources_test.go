package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// During a NATS outage (a real nats-server stopped: the client waits for it
// to come back) the dashboard still shows what Redis holds: each source is
// read with a deadline of its own, and the banner names the queues, not the
// store.
func TestDashboardDuringANATSOutageShowsTheStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := testsvc.StartNATS(t)
	js, err := jetstream.New(n.Connect(t, nats.MaxReconnects(-1)))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := queue.Open(ctx, js, queue.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reports, err := ingest.Open(ctx, js, ingest.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(embeddedtest.Redis(t), "outage")
	if err := st.SaveTask(ctx, task.Task{ID: "t-pub", Fingerprint: "fp1", Status: task.StatusPublished, Repo: "acme/shop"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Count(ctx, time.Now(), series.Count{Event: series.EventPublished, Repo: "acme/shop"}); err != nil {
		t.Fatal(err)
	}
	opts := Options{ReadOpen: true, Land: st, History: st, Jobs: jobs.Stream(), Reports: reports.Stream(), ReadTimeout: 2 * time.Second}
	srv := httptest.NewServer(New(&recordingIntake{}, st, prometheus.NewRegistry(), opts, zaptest.NewLogger(t)).Handler())
	defer srv.Close()

	if _, page := get(t, srv.URL+"/"); strings.Contains(page, "store-unavailable") {
		t.Fatalf("a banner with every source up:\n%s", between(page, `id="store-unavailable"`, "</div>"))
	}
	n.Stop()
	_, page := get(t, srv.URL+"/")
	banner := strings.TrimPrefix(between(page, `id="store-unavailable">`, "</div>"), `id="store-unavailable">`)
	if !strings.Contains(banner, sourceJobs) || !strings.Contains(banner, sourceReports) {
		t.Errorf("the banner does not name the queues: %q", banner)
	}
	for _, never := range []string{"store", "history", "pull request", "recent tasks"} {
		if strings.Contains(banner, never) {
			t.Errorf("the banner names %q, which Redis answered: %q", never, banner)
		}
	}
	for _, want := range []string{`id="publish-rate">100.0%`, `<a href="/api/v1/tasks/t-pub">t-pub</a>`, `data-chart="weekly acme/shop"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s, which Redis holds", want)
		}
	}
}
