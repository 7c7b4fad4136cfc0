package faults

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

var (
	soakCount = flag.Int("soak.reports", 50000, "reports BenchmarkServeSoak posts")
	soakMax   = flag.Duration("soak.max", 14*time.Minute, "BenchmarkServeSoak stops posting after this long and reports what it did")
)

// soakRepos is how many allowlisted repositories the soak's reports name.
const soakRepos = 4

// BenchmarkServeSoak runs `bot serve` as a process against redis-server and
// nats-server (child processes too), posts -soak.reports small go test
// -json reports (6 KB) to its ingest API, eight at a time, and samples its
// resident memory (VmRSS) once every 2,500 reports have been triaged:
//
//	go test -run '^$' -bench BenchmarkServeSoak -benchtime 1x ./pkg/faults/
//
// The reports are cheap for triage and still go through all of its state:
// each of four local repositories (clones of the demo's sample) first gets
// one report that is triaged for real (reproduced, re-run, bisected: a
// queued task holds its failure group, no worker takes it); then four in
// five reports repeat that failure, each with a line of its own so that
// the intake stores it as a new submission, and triage drops each as a
// duplicate of the queued task (a dropped task saved, its group's claim
// read, the day's counters incremented); one in five passes (triaged,
// nothing to do). It prints the reports, the time, the RSS at the start,
// after the warm-up (5,000 reports) and at the end, the slope over the
// samples after the warm-up, and what Redis holds at the end.
func BenchmarkServeSoak(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc to read a process's memory")
	}
	for b.Loop() {
		soak(b, *soakCount)
	}
}

func soak(b *testing.B, total int) {
	ctx := context.Background()
	// Printed as it goes, in full (a benchmark's log is cut short).
	say := func(format string, args ...any) { fmt.Printf("soak: "+format+"\n", args...) }
	r := testsvc.StartRedis(b, "")
	n := testsvc.StartNATS(b)
	bin := binary(b, "bot")

	root := b.TempDir()
	seed, err := demo.Build(ctx, filepath.Join(root, "repo-0"))
	if err != nil {
		b.Fatal(err)
	}
	repos := []string{seed.Dir}
	for i := 1; i < soakRepos; i++ {
		dir := filepath.Join(root, fmt.Sprint("repo-", i))
		if out, err := exec.Command("git", "clone", "-q", seed.Dir, dir).CombinedOutput(); err != nil {
			b.Fatalf("clone the sample: %v\n%s", err, out)
		}
		repos = append(repos, dir)
	}
	failing, passing := soakReports(seed.Report)

	const token, readToken = "soak-ingest-token", "soak-read-token"
	cfg := config.Default()
	cfg.DataDir = b.TempDir()
	cfg.HTTP.Addr = fmt.Sprintf("127.0.0.1:%d", freePort(b))
	cfg.HTTP.AllowRepos = []string{root + "/**"}
	cfg.HTTP.IngestToken, cfg.HTTP.ReadToken = token, readToken
	cfg.NATS.URL, cfg.Redis.Addr, cfg.Redis.Prefix = n.URL(), r.Addr(), "soak"
	cfg.Triage.Reruns = 2
	cfg.Publish.Dir = b.TempDir()
	p := startProc(b, bin, cfg.DataDir, writeConfig(b, cfg), "serve")
	pid := p.cmd.Process.Pid
	base := "http://" + cfg.HTTP.Addr
	testsvc.Poll(b, time.Minute, "bot serve answers /healthz", func() bool { return get(base+"/healthz") == http.StatusOK })
	rss := func() float64 {
		v, _, err := procMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		return mb(v)
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	post := func(repo string, rep []byte) {
		u := base + "/api/v1/reports?repo=" + url.QueryEscape(repo) + "&commit=" + seed.Head + "&good=" + seed.Good
		req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(rep))
		if err != nil {
			b.Error(err)
			return
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			b.Errorf("post: %v", err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || !bytes.Contains(body, []byte(`"duplicate": false`)) {
			b.Errorf("post: %d %s", resp.StatusCode, body)
		}
	}
	triaged := func() int {
		return scrapeCounter(b, client, base+"/metrics", readToken, `redfix_triage_reports_total{result="triaged"}`)
	}

	// The seeds: a task per repository holds the failure's group.
	start := rss()
	seedBegan := time.Now()
	for i, repo := range repos {
		post(repo, failing(-1-i))
	}
	testsvc.Poll(b, 10*time.Minute, "the seed reports were not triaged", func() bool { return triaged() == len(repos) })
	st := store.New(r.Client(), cfg.Redis.Prefix)
	queued, err := st.FindTasks(ctx, task.Filter{Status: task.StatusQueued})
	if err != nil || len(queued) != len(repos) {
		b.Fatalf("after the seeds: %d queued tasks (%v), want one per repository (%d)", len(queued), err, len(repos))
	}
	seeded := rss()
	say("bot serve pid %d: RSS %.1f MB at start, %.1f MB once the %d seed reports were triaged (reproduced and bisected, %s)",
		pid, start, seeded, len(repos), time.Since(seedBegan).Round(time.Second))

	// The soak.
	const every, warmUp, workers = 2500, 5000, 8
	type sample struct {
		reports int
		rss     float64
	}
	var samples []sample
	began := time.Now()
	posted := 0
	var failures atomic.Int64
	for posted < total && time.Since(began) < *soakMax {
		batch := min(every, total-posted)
		next := make(chan int)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := range next {
					repo := repos[i%len(repos)]
					if i%5 == 4 {
						post(repo, passing(i))
					} else {
						failures.Add(1)
						post(repo, failing(i))
					}
				}
			})
		}
		for i := posted; i < posted+batch; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		posted += batch
		want := len(repos) + posted
		testsvc.Poll(b, 10*time.Minute, fmt.Sprintf("%d reports posted were not all triaged", posted), func() bool { return triaged() >= want })
		samples = append(samples, sample{posted, rss()})
		say("%6d reports in %s: RSS %.1f MB", posted, time.Since(began).Round(time.Second), samples[len(samples)-1].rss)
		if b.Failed() {
			b.FailNow()
		}
	}
	took := time.Since(began)
	if posted < total {
		say("stopped after %s (-soak.max): %d of %d reports posted", *soakMax, posted, total)
	}

	// The slope after the warm-up, by least squares, in MB per 10,000 reports.
	var xs, ys []float64
	warm := 0.0
	for _, s := range samples {
		if s.reports >= warmUp {
			if len(xs) == 0 {
				warm = s.rss
			}
			xs, ys = append(xs, float64(s.reports)/10000), append(ys, s.rss)
		}
	}
	slope := leastSquaresSlope(xs, ys)
	end := samples[len(samples)-1].rss
	_, peak, _ := procMemory(pid)
	dropped, err := st.FindTasks(ctx, task.Filter{Status: task.StatusDropped, Limit: 1})
	if err != nil || len(dropped) == 0 || !strings.Contains(dropped[0].Reason, "duplicate") {
		b.Fatalf("the duplicates were not dropped as duplicates: %v %v", dropped, err)
	}
	counts, _ := st.CountByStatus(ctx)
	used := redisUsedMemory(b, r)
	say("%d reports (%d repeating a failure, %d passing) over %d repositories in %s (%.0f reports/s)",
		posted, failures.Load(), int64(posted)-failures.Load(), len(repos), took.Round(time.Second), float64(posted)/took.Seconds())
	say("bot serve RSS: start %.1f MB, after the warm-up (%d reports) %.1f MB, end %.1f MB, peak %.1f MB; slope after the warm-up %+.2f MB per 10,000 reports",
		start, warmUp, warm, end, mb(peak), slope)
	say("Redis: %.1f MB used, tasks by status %v", mb(used), counts)
	b.ReportMetric(float64(posted), "reports")
	b.ReportMetric(start, "RSS-start-MB")
	b.ReportMetric(warm, "RSS-warm-MB")
	b.ReportMetric(end, "RSS-end-MB")
	b.ReportMetric(slope, "MB/10k-reports")
}

// soakReports makes the soak's reports from the sample's go test -json
// report: failing(i) is the sample's (its one failure) and passing(i) its
// passing package alone, each with an output line of its own so that no
// two are the same submission.
func soakReports(sample []byte) (failing, passing func(i int) []byte) {
	var pass []byte
	for _, line := range bytes.SplitAfter(sample, []byte("\n")) {
		if bytes.Contains(line, []byte(`"Package":"example.com/shop/cart"`)) {
			pass = append(pass, line...)
		}
	}
	unique := func(i int) []byte {
		return fmt.Appendf(nil, `{"Action":"output","Package":"example.com/shop/cart","Output":"soak report %d\n"}`+"\n", i)
	}
	failing = func(i int) []byte { return append(unique(i), sample...) }
	passing = func(i int) []byte { return append(unique(i), pass...) }
	return failing, passing
}

// scrapeCounter reads one series' value from a /metrics page, with the
// read token.
func scrapeCounter(b *testing.B, c *http.Client, u, token, series string) int {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatalf("scrape %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("scrape %s: %s", u, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("scrape %s: %s: %v", u, series, err)
			}
			return int(f)
		}
	}
	return 0
}

// redisUsedMemory is INFO memory's used_memory.
func redisUsedMemory(b *testing.B, r *testsvc.Redis) int64 {
	rdb := r.Client()
	defer rdb.Close()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// leastSquaresSlope is the slope of the line that fits the points best
// (0 for fewer than two).
func leastSquaresSlope(xs, ys []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return 0
	}
	return num / den
}
