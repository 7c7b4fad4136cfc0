// Package ingestbench measures the ingest API against the queue under it:
// the same test reports posted to the bot's HTTP handler, a few at a time,
// then published straight to JetStream on the same server, with the rate
// and the latency percentiles of each and their ratio.
package ingestbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reports are the benchmark's reports: a go test -json run of one package
// with passing tests and one failing test, padded with passing tests to
// about a size. They differ only in the number the failing test's message
// names (nine digits, so every report has the same length), so each is a
// new submission, not a duplicate.
//
// A report is written into a buffer its poster keeps, not made ahead for
// every post: holding all of them (120 MB for 20,000) made the process's
// heap so large that the collector seldom ran and every allocation of the
// server measured landed on a page never touched before, a page fault a
// server with its own small heap does not pay.
type Reports struct {
	template []byte
	at       []int // where the numbers go: i, i, i+1
}

// digits is the width of a report's number.
const digits = 9

// NewReports makes the reports of about size bytes.
func NewReports(size int) Reports {
	var b bytes.Buffer
	const pkg = "example.com/bench/calc"
	at := "2026-11-28T10:00:00.000000Z"
	line := func(action, test, output string, elapsed float64) {
		fmt.Fprintf(&b, `{"Time":%q,"Action":%q,"Package":%q`, at, action, pkg)
		if test != "" {
			fmt.Fprintf(&b, `,"Test":%q`, test)
		}
		if output != "" {
			fmt.Fprintf(&b, `,"Output":%q`, output)
		}
		if action == "pass" || action == "fail" {
			fmt.Fprintf(&b, `,"Elapsed":%g`, elapsed)
		}
		b.WriteString("}\n")
	}
	fail := "TestSum"
	hole := strings.Repeat("#", digits)
	line("run", fail, "", 0)
	line("output", fail, "=== RUN   "+fail+"\n", 0)
	// The failing assertion's place is a neutral name and a line: what
	// the benchmark measures is the report's bytes, not whose language.
	line("output", fail, fmt.Sprintf("    sum_check:12: Sum(%s, 1) = %s, want %s\n", hole, hole, hole), 0)
	line("output", fail, "--- FAIL: "+fail+" (0.00s)\n", 0)
	line("fail", fail, "", 0)
	// The tail every report ends with, counted before padding.
	tail := len(`{"Time":"","Action":"output","Package":"","Output":"FAIL\n"}`+"\n") + 2*len(at) + 2*len(pkg) + 120
	for n := 0; b.Len()+tail < size; n++ {
		name := fmt.Sprintf("TestCase%03d", n)
		line("run", name, "", 0)
		line("output", name, "=== RUN   "+name+"\n", 0)
		line("output", name, "--- PASS: "+name+" (0.00s)\n", 0)
		line("pass", name, "", 0)
	}
	line("output", "", "FAIL\n", 0)
	line("fail", "", "", 0.01)
	r := Reports{template: b.Bytes()}
	for off := 0; len(r.at) < 3; {
		k := bytes.Index(r.template[off:], []byte(hole))
		r.at = append(r.at, off+k)
		off += k + digits
	}
	return r
}

// Len is the length of every report.
func (r Reports) Len() int { return len(r.template) }

// Put writes the i-th report into buf's memory (grown if it is too short)
// and returns it.
func (r Reports) Put(buf []byte, i int) []byte {
	buf = append(buf[:0], r.template...)
	for k, at := range r.at {
		n := i
		if k == 2 {
			n++
		}
		for d := digits - 1; d >= 0; d-- {
			buf[at+d] = byte('0' + n%10)
			n /= 10
		}
	}
	return buf
}

// Figures are one side's measurements.
type Figures struct {
	N       int           // operations that succeeded
	Errors  int           // operations that failed
	Elapsed time.Duration // wall time of the whole run
	P50     time.Duration
	P99     time.Duration
	Max     time.Duration
	// FirstError is the first failure's text, for the report.
	FirstError string
	// CPU is what each of the run's Processes spent (Measure).
	CPU Usage
}

// Measure runs fn and adds to its figures the CPU time procs spent.
func Measure(procs []Process, fn func() Figures) Figures {
	before := cpuNow(procs)
	f := fn()
	f.CPU = before.since(procs)
	return f
}

// Rate is the operations that succeeded per second.
func (f Figures) Rate() float64 {
	if f.Elapsed <= 0 {
		return 0
	}
	return float64(f.N) / f.Elapsed.Seconds()
}

// run calls op for i in [0, n) from conc goroutines, w in [0, conc)
// naming the goroutine and report the report numbered from+i (written into
// the goroutine's own buffer, reused by its next call), and measures each
// call.
func run(ctx context.Context, reports Reports, from, n, conc int, op func(ctx context.Context, w, i int, report []byte) error) Figures {
	var (
		next     atomic.Int64
		mu       sync.Mutex
		lat      = make([]time.Duration, 0, n)
		errs     int
		firstErr string
		wg       sync.WaitGroup
	)
	start := time.Now()
	for w := range max(1, conc) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, n/max(1, conc)+1)
			var buf []byte
			bad, first := 0, ""
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					break
				}
				buf = reports.Put(buf, from+i)
				t0 := time.Now()
				if err := op(ctx, w, i, buf); err != nil {
					bad++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			if firstErr == "" {
				firstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	f := Figures{N: len(lat), Errors: errs, Elapsed: time.Since(start), FirstError: firstErr}
	slices.Sort(lat)
	if len(lat) > 0 {
		f.P50 = lat[len(lat)*50/100]
		f.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
		f.Max = lat[len(lat)-1]
	}
	return f
}

// Poster posts reports to an ingest API.
//
// Each of the concurrent posters owns one keep-alive connection and does
// its exchange itself: the request written by net/http's own writer in one
// write, the answer read by its own reader, in the poster's goroutine.
// http.Client's transport hands each request to a writer goroutine and its
// answer to a reader goroutine, two more wake-ups per report on the cores
// the server measured runs on; a CI runner posting from another machine
// costs the server nothing of that.
type Poster struct {
	// Addr is the API's host and port ("127.0.0.1:8080").
	Addr string
	// Token is the ingest token, if the API requires one.
	Token  string
	Repo   string
	Commit string
}

// conn is one poster's connection, dialled on first use and again after
// the server closed it.
type conn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

func (p Poster) exchange(ctx context.Context, c *conn, req *http.Request) (*http.Response, []byte, error) {
	if c.c == nil {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", p.Addr)
		if err != nil {
			return nil, nil, err
		}
		c.c, c.br, c.bw = nc, bufio.NewReaderSize(nc, 16<<10), bufio.NewWriterSize(nc, 64<<10)
	}
	// An answer not come within a minute is an error, as the client's
	// timeout made it; a cancelled run stops at that deadline too.
	if err := c.c.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		c.close()
		return nil, nil, err
	}
	if err := req.Write(c.bw); err != nil {
		c.close()
		return nil, nil, err
	}
	if err := c.bw.Flush(); err != nil {
		c.close()
		return nil, nil, err
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		c.close()
		return nil, nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if err != nil || resp.Close {
		c.close()
	}
	return resp, body, err
}

// Post posts the reports numbered first to first+n-1, conc at a time. A report
// counts as done when the API answered 202 Accepted and said it was not a
// duplicate.
func (p Poster) Post(ctx context.Context, reports Reports, first, n, conc int) Figures {
	u := "http://" + p.Addr + "/api/v1/reports?repo=" + url.QueryEscape(p.Repo) + "&commit=" + url.QueryEscape(p.Commit)
	conns := make([]conn, max(1, conc))
	defer func() {
		for i := range conns {
			conns[i].close()
		}
	}()
	return run(ctx, reports, first, n, conc, func(ctx context.Context, w, i int, report []byte) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(report))
		if err != nil {
			return err
		}
		if p.Token != "" {
			req.Header.Set("Authorization", "Bearer "+p.Token)
		}
		resp, body, err := p.exchange(ctx, &conns[w], req)
		if err != nil {
			return fmt.Errorf("post report %d: %w", i, err)
		}
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("report %d: %s: %s", i, resp.Status, bytes.TrimSpace(body))
		}
		if bytes.Contains(body, []byte(`"duplicate": true`)) {
			return fmt.Errorf("report %d: answered as a duplicate", i)
		}
		return nil
	})
}

// RawStream is the stream the raw publishes go to: file storage and a
// duplicate window, as the intake's stream has.
const (
	RawStream  = "REDFIX_BENCH_RAW"
	RawSubject = "redfix.bench.raw"
)

// Publish publishes the reports numbered first to first+n-1 straight to
// JetStream, conc at a time, each with a message ID of its own and its
// acknowledgement awaited, on a stream made for it (removed first and
// afterwards).
func Publish(ctx context.Context, js jetstream.JetStream, reports Reports, first, n, conc int) (Figures, error) {
	_ = js.DeleteStream(ctx, RawStream)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: RawStream, Subjects: []string{RawSubject}, Storage: jetstream.FileStorage,
		Retention: jetstream.WorkQueuePolicy, Duplicates: 24 * time.Hour,
	}); err != nil {
		return Figures{}, fmt.Errorf("create stream %s: %w", RawStream, err)
	}
	defer func() { _ = js.DeleteStream(context.WithoutCancel(ctx), RawStream) }()
	f := run(ctx, reports, first, n, conc, func(ctx context.Context, _, i int, report []byte) error {
		m := nats.NewMsg(RawSubject)
		m.Data = report
		if _, err := js.PublishMsg(ctx, m, jetstream.WithMsgID(fmt.Sprint("raw-", i)), jetstream.WithExpectStream(RawStream)); err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
		return nil
	})
	return f, nil
}

// Result is one run of the benchmark.
type Result struct {
	Reports, Concurrency, Bytes int
	API, Raw                    Figures
	// Procs name the processes whose CPU the figures count.
	Procs []Process
}

// Ratio is the API's rate over raw JetStream's.
func (r Result) Ratio() float64 {
	if r.Raw.Rate() == 0 {
		return 0
	}
	return r.API.Rate() / r.Raw.Rate()
}

// perOp is d per operation in microseconds.
func perOp(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

// Write prints r as a small table and the ratio.
func (r Result) Write(w io.Writer) error {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	fmt.Fprintf(w, "%d reports of %d bytes, %d at a time\n\n", r.Reports, r.Bytes, r.Concurrency)
	fmt.Fprintf(w, "| path | done | errors | per second | p50 | p99 | max |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, row := range []struct {
		name string
		f    Figures
	}{{"ingest API (POST /api/v1/reports)", r.API}, {"JetStream publish, same bytes", r.Raw}} {
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %s | %s | %s |\n", row.name, row.f.N, row.f.Errors, row.f.Rate(), ms(row.f.P50), ms(row.f.P99), ms(row.f.Max))
	}
	_, err := fmt.Fprintf(w, "\ningest API / JetStream: %.2f\n", r.Ratio())
	if len(r.Procs) > 0 {
		fmt.Fprintf(w, "\nCPU per report (µs, user and system):\n\n| path |")
		for _, p := range r.Procs {
			fmt.Fprintf(w, " %s |", p.Name)
		}
		fmt.Fprintf(w, " all |\n| --- |%s\n", strings.Repeat(" ---: |", len(r.Procs)+1))
		for _, row := range []struct {
			name string
			f    Figures
		}{{"ingest API", r.API}, {"JetStream publish", r.Raw}} {
			fmt.Fprintf(w, "| %s |", row.name)
			var all time.Duration
			for i := range r.Procs {
				var d time.Duration
				if i < len(row.f.CPU) {
					d = row.f.CPU[i]
				}
				all += d
				fmt.Fprintf(w, " %.0f |", perOp(d, row.f.N))
			}
			fmt.Fprintf(w, " %.0f |\n", perOp(all, row.f.N))
		}
	}
	for _, row := range []struct {
		name string
		f    Figures
	}{{"ingest API", r.API}, {"JetStream", r.Raw}} {
		if row.f.FirstError != "" {
			fmt.Fprintf(w, "first %s error: %s\n", row.name, row.f.FirstError)
		}
	}
	return err
}
