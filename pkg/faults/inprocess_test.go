package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/app"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/task"
)

// redisDown is how long Redis stays down in TestRedisDownDuringTriage at
// least. The test needs no more than the outage shows: three attempts at
// the report failed, each handed back for longer than the last (a few
// seconds); a longer outage follows the same code path, with the delay
// capped by the stream's MaxRetryDelay.
var redisDown = flag.Duration("faults.redis-down", 0, "how long Redis stays down in TestRedisDownDuringTriage at least")

// sampleRepo builds the demo's repository (a real history whose head fails
// a test) once per test binary.
var (
	sampleOnce sync.Once
	sampleRepo demo.Sample
	sampleErr  error
	sampleDir  string
)

func sample(t *testing.T) demo.Sample {
	t.Helper()
	sampleOnce.Do(func() {
		sampleRepo, sampleErr = demo.Build(context.Background(), filepath.Join(sampleDir, "repo"))
	})
	if sampleErr != nil {
		t.Fatalf("build the sample repository: %v", sampleErr)
	}
	return sampleRepo
}

// botConfig is a bot against the given servers that retries quickly.
func botConfig(t *testing.T, natsURL, redisAddr string) config.Config {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.NATS.URL, cfg.Redis.Addr = natsURL, redisAddr
	cfg.Redis.Prefix = fmt.Sprintf("faults:%s:%d", t.Name(), time.Now().UnixNano())
	cfg.HTTP.AllowRepos = []string{sample(t).Dir}
	cfg.Triage.Reruns = 2
	cfg.Triage.ReportRetryDelay = time.Second
	cfg.Log.Level = "warn"
	return cfg
}

// bot is a triage service in this process: the API on an httptest server
// and the triage loop, whose outcomes it collects, as it does its
// warnings.
type bot struct {
	sys  *app.System
	api  *httptest.Server
	mu   sync.Mutex
	outs []app.TriageEvent
	logs *observer.ObservedLogs
	stop func()
}

func startBot(t *testing.T, cfg config.Config) *bot {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	seen, logs := observer.New(zap.WarnLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Core(), seen))
	sys, err := app.Start(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	b := &bot{sys: sys, api: httptest.NewServer(sys.Handler(cfg)), logs: logs}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sys.RunTriage(ctx, cfg, func(o app.TriageEvent) {
			b.mu.Lock()
			b.outs = append(b.outs, o)
			b.mu.Unlock()
		})
	}()
	var once sync.Once
	b.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			b.api.Close()
			sys.Close()
		})
	}
	t.Cleanup(b.stop)
	return b
}

// post sends a report to the ingest API and returns the status code and
// the submission's ID.
func post(t *testing.T, base, repo, commit string, report []byte) (int, string) {
	t.Helper()
	u := base + "/api/v1/reports?repo=" + url.QueryEscape(repo) + "&commit=" + commit
	resp, err := http.Post(u, "application/json", bytes.NewReader(report))
	if err != nil {
		t.Fatalf("post report: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &out)
	return resp.StatusCode, out.ID
}

// queued returns the outcomes that queued a task.
func (b *bot) queued() []app.TriageEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []app.TriageEvent
	for _, o := range b.outs {
		if o.Status == task.StatusQueued {
			out = append(out, o)
		}
	}
	return out
}

func (b *bot) outcomes() []app.TriageEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]app.TriageEvent(nil), b.outs...)
}

// retryDelays are the delays the bot gave the submissions whose triage
// failed, in order.
func (b *bot) retryDelays() []time.Duration {
	var out []time.Duration
	for _, e := range b.logs.FilterMessage("triage failed; will retry").All() {
		if d, ok := e.ContextMap()["retry_in"].(time.Duration); ok {
			out = append(out, d)
		}
	}
	return out
}

// padded is the sample's report grown to at least n bytes with passing
// tests of another package: the failure and its triage are unchanged.
func padded(rep []byte, n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"Action":"run","Package":"example.com/padding","Test":"TestPad%d"}`+"\n", i)
		fmt.Fprintf(&b, `{"Action":"output","Package":"example.com/padding","Test":"TestPad%d","Output":"%s\n"}`+"\n", i, strings.Repeat("p", 300))
		fmt.Fprintf(&b, `{"Action":"pass","Package":"example.com/padding","Test":"TestPad%d","Elapsed":0}`+"\n", i)
	}
	b.WriteString(`{"Action":"pass","Package":"example.com/padding","Elapsed":0}` + "\n")
	b.Write(rep)
	return b.Bytes()
}

// A 5 MB report, five times the server's max_payload, is accepted and
// triaged.
func TestFiveMegabyteReportIsAcceptedAndTriaged(t *testing.T) {
	n := startNATS(t)
	r := startRedis(t)
	s := sample(t)
	b := startBot(t, botConfig(t, n.URL(), r.Addr()))
	rep := padded(s.Report, 5<<20)
	code, id := post(t, b.api.URL, s.Dir, s.Head, rep)
	if code != http.StatusAccepted || id == "" {
		t.Fatalf("a %d-byte report: %d, want 202", len(rep), code)
	}
	testsvc.Poll(t, 3*time.Minute, "the 5 MB report was not triaged", func() bool { return len(b.queued()) == 1 })
}

// Redis stops after a report was accepted; triage fails while it is down,
// the report is retried with a growing delay, never dropped, and is
// triaged once Redis is back.
func TestRedisDownDuringTriage(t *testing.T) {
	n := startNATS(t)
	r := startRedis(t)
	s := sample(t)
	b := startBot(t, botConfig(t, n.URL(), r.Addr()))

	r.Stop()
	code, _ := post(t, b.api.URL, s.Dir, s.Head, s.Report)
	if code != http.StatusAccepted {
		t.Fatalf("report while Redis is down: %d, want 202 (it is stored on NATS)", code)
	}
	// Redis stays down until the retries have shown: three failed
	// attempts, none triaged, each handed back for longer than the last.
	down := time.Now()
	var delays []time.Duration
	testsvc.PollSeeing(t, 3*time.Minute, "three failed attempts at the report while Redis is down", func() string { return fmt.Sprint("retry delays ", delays) }, func() bool {
		if len(b.outcomes()) > 0 {
			t.Fatalf("triaged while Redis was down: %+v", b.outcomes())
		}
		delays = b.retryDelays()
		return len(delays) >= 3 && time.Since(down) >= *redisDown
	})
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1] || delays[i] == delays[0] {
			t.Fatalf("retry delays %v: want each longer than the first, none shorter than the one before", delays)
		}
	}
	r.Start()
	testsvc.Poll(t, 3*time.Minute, "the report was not triaged after Redis came back", func() bool { return len(b.queued()) == 1 })
	if n, err := b.sys.Intake.Stream().ParkedCount(context.Background()); err != nil || n != 0 {
		t.Fatalf("parked %d (%v), want 0", n, err)
	}
}

// NATS restarts while a report is being triaged and another waits; after
// the restart every accepted report is triaged, a report posted while it
// was down was refused with 503 (CI retries), and its re-post is triaged.
// A report the server handed to a fetch as it stopped reached no bot: it
// comes back after the report's ack wait (a minute by default; it was ten,
// longer than this test waits, and a CI run under load lost the second
// report that way).
func TestNATSRestartLosesNothing(t *testing.T) {
	n := startNATS(t)
	r := startRedis(t)
	s := sample(t)
	cfg := botConfig(t, n.URL(), r.Addr())
	b := startBot(t, cfg)

	code, first := post(t, b.api.URL, s.Dir, s.Head, s.Report)
	if code != http.StatusAccepted {
		t.Fatalf("first report: %d", code)
	}
	// The same failure at the commit before the head: another submission.
	prev := s.Commits[len(s.Commits)-2]
	code, second := post(t, b.api.URL, s.Dir, prev, s.Report)
	if code != http.StatusAccepted || second == first {
		t.Fatalf("second report: %d %s", code, second)
	}
	n.stop()
	code, _ = post(t, b.api.URL, s.Dir, s.Commits[len(s.Commits)-3], s.Report)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("report while NATS is down: %d, want 503", code)
	}
	n.start()
	testsvc.Poll(t, time.Minute, "the bot did not reconnect", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return b.sys.Ready(ctx) == nil
	})
	code, third := post(t, b.api.URL, s.Dir, s.Commits[len(s.Commits)-3], s.Report)
	if code != http.StatusAccepted {
		t.Fatalf("re-post after the restart: %d", code)
	}
	// Every submission reaches an outcome: one queued task for the group,
	// the others duplicates of it.
	testsvc.PollSeeing(t, 4*time.Minute, "not every accepted report was triaged", func() string {
		return fmt.Sprintf("outcomes %+v", b.outcomes())
	}, func() bool {
		seen := map[string]bool{}
		for _, o := range b.outcomes() {
			if o.Status == task.StatusQueued {
				seen["queued"] = true
			}
			if strings.HasPrefix(o.Reason, "duplicate of task") {
				seen["dup:"+o.TaskID] = true
			}
		}
		dups := len(seen) - 1
		return seen["queued"] && dups >= 2
	})
	if q := b.queued(); len(q) < 1 {
		t.Fatalf("no task queued: %+v", b.outcomes())
	}
	ctx := context.Background()
	lag, err := b.sys.Jobs.Lag(ctx)
	if err != nil || lag != 1 {
		t.Fatalf("job queue holds %d jobs (%v), want the group's one", lag, err)
	}
	_ = third
}

var httpClient = &http.Client{Timeout: 5 * time.Second}
