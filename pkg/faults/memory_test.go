package faults

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/report/reporttest"
)

// BenchmarkServeNestedJUnitRSS gives `bot serve`, a real process on an
// in-process NATS (and its own embedded Redis), a 1 MiB JUnit report of
// nested test suites through the ingest API, and prints the process's
// resident memory once it answers /healthz and its peak (VmHWM) once the
// API has answered the report. Each run starts a bot of its own, so that
// the peak is this report's:
//
//	go test -run '^$' -bench BenchmarkServeNestedJUnitRSS -benchtime 1x ./pkg/faults/
//
// deep-1000 and deep-4000 are blocks of suites nested 1000 and 4000 deep
// (the shape a security review sent: deeper costs a tree parser more);
// wide-24 is blocks nested 24 deep, a valid report that is parsed whole.
func BenchmarkServeNestedJUnitRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc to read a process's memory")
	}
	for _, c := range []struct {
		name  string
		depth int
	}{{"deep-1000", 1000}, {"deep-4000", 4000}, {"wide-24", 24}} {
		b.Run(c.name, func(b *testing.B) {
			rep := reporttest.NestedJUnit(1<<20, c.depth)
			n := startNATS(b)
			bin := binary(b, "bot")
			for b.Loop() {
				m := serveReport(b, bin, n.URL(), rep)
				b.Logf("report %d bytes (suites nested %d deep): HTTP %d %s; bot serve RSS %.1f MB before, peak %.1f MB",
					len(rep), c.depth, m.code, m.answer, mb(m.before), mb(m.peak))
				b.ReportMetric(float64(len(rep)), "report-bytes")
				b.ReportMetric(mb(m.before), "RSS-before-MB")
				b.ReportMetric(mb(m.peak), "RSS-peak-MB")
			}
		})
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// served is what one bot did with one report.
type served struct {
	code         int
	answer       string
	before, peak int64 // bytes
}

// serveReport starts `bot serve` on natsURL, posts rep to its ingest API
// and reads its memory; the bot is stopped at the end of b.
func serveReport(b *testing.B, bin, natsURL string, rep []byte) served {
	b.Helper()
	const token = "bench-ingest-token"
	repo := b.TempDir()
	cfg := config.Default()
	cfg.DataDir = b.TempDir()
	cfg.HTTP.Addr = fmt.Sprintf("127.0.0.1:%d", freePort(b))
	cfg.HTTP.AllowRepos = []string{repo}
	cfg.HTTP.IngestToken = token
	cfg.NATS.URL = natsURL
	cfg.Redis.Addr = "" // the bot's embedded Redis-protocol server
	cfg.Redis.Prefix = fmt.Sprintf("bench:%d", time.Now().UnixNano())
	cfg.Publish.Dir = b.TempDir()
	p := startProc(b, bin, cfg.DataDir, writeConfig(b, cfg), "serve")
	base := "http://" + cfg.HTTP.Addr
	testsvc.Poll(b, time.Minute, "bot serve answers /healthz", func() bool { return get(base+"/healthz") == http.StatusOK })
	before, _, err := procMemory(p.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	u := base + "/api/v1/reports?repo=" + url.QueryEscape(repo) + "&commit=" + strings.Repeat("a", 40)
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(rep))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/xml")
	client := &http.Client{Timeout: 10 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatalf("post report: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, peak, err := procMemory(p.cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	return served{code: resp.StatusCode, answer: strings.Join(strings.Fields(string(answer)), " "), before: before, peak: peak}
}

// procMemory reads a process's resident set size now (VmRSS) and at its
// peak so far (VmHWM) from /proc, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status: %s: %w", pid, name, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("read /proc/%d/status: %w", pid, err)
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS or VmHWM", pid)
	}
	return rss, hwm, nil
}
