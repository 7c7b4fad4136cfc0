package throughput

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/job"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/triage"
)

// makeReport is a go test -json report of 40 tests of which failing fail,
// their messages numbered so that reports share some groups: report i
// repeats the groups of report i-3 (a red run reported again).
func makeReport(i, failing int) []byte {
	var b strings.Builder
	pkg := fmt.Sprintf("example.com/svc/p%d", i%17)
	for k := 0; k < 40; k++ {
		test := fmt.Sprintf("TestCase%d", k)
		fmt.Fprintf(&b, `{"Action":"run","Package":%q,"Test":%q}`+"\n", pkg, test)
		if k < failing {
			group := (i / 3) * failing
			fmt.Fprintf(&b, `{"Action":"output","Package":%q,"Test":%q,"Output":"    case_test.go:%d: got 0x%x at /tmp/TestCase%d123/%d, want %d (goroutine %d)\n"}`+"\n",
				pkg, test, 10+k, 0xc000012000+i, k, i, group+k, i*7)
			fmt.Fprintf(&b, `{"Action":"fail","Package":%q,"Test":%q,"Elapsed":0.01}`+"\n", pkg, test)
			continue
		}
		fmt.Fprintf(&b, `{"Action":"pass","Package":%q,"Test":%q,"Elapsed":0.01}`+"\n", pkg, test)
	}
	fmt.Fprintf(&b, `{"Action":"fail","Package":%q,"Elapsed":0.5}`+"\n", pkg)
	return []byte(b.String())
}

// BenchmarkIngestTriage pushes reports through parse, fingerprint, dedup
// (group claims in Redis) and queueing (JetStream, message-id dedup), eight
// reports at once, and reports failures per second and each report's p50
// and p99 latency. Reproduction and bisection are left out: they run the
// tests, and cost what the tests cost. With REDFIX_TEST_REDIS_ADDR set the
// store is that Redis, otherwise the in-process one.
func BenchmarkIngestTriage(b *testing.B) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(b)
	if addr := os.Getenv("REDFIX_TEST_REDIS_ADDR"); addr != "" {
		rdb = redis.NewClient(&redis.Options{Addr: addr})
		b.Cleanup(func() { rdb.Close() })
	}
	prefix := fmt.Sprintf("redfix-bench-%d", time.Now().UnixNano())
	st := store.New(rdb, prefix)
	b.Cleanup(func() {
		keys, _ := rdb.Keys(context.Background(), prefix+":*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	q, err := queue.Open(ctx, embeddedtest.JetStream(b), queue.Config{}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	const failing, workers = 5, 8
	reports := make([][]byte, b.N)
	for i := range reports {
		reports[i] = makeReport(i, failing)
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  int
		queued    int
	)
	next := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				res, err := report.Parse(reports[i])
				if err != nil {
					b.Error(err)
					return
				}
				repo := "https://git.example/org/svc.git"
				n := 0
				for _, g := range triage.GroupFailures(repo, res.Failures) {
					id := fmt.Sprintf("task-%d-%s", i, g.Fingerprint[:8])
					_, created, err := st.ClaimGroup(ctx, g.Fingerprint, id)
					if err != nil {
						b.Error(err)
						return
					}
					if !created {
						continue
					}
					tk := task.Task{ID: id, Fingerprint: g.Fingerprint, Repo: repo, Commit: strings.Repeat("a", 40), Failures: g.Failures, Status: task.StatusQueued}
					if _, err := q.Enqueue(ctx, job.New(tk)); err != nil {
						b.Error(err)
						return
					}
					n++
				}
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				failures += len(res.Failures)
				queued += n
				mu.Unlock()
			}
		}()
	}
	for i := range reports {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	b.ReportMetric(float64(failures)/elapsed.Seconds(), "failures/s")
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "reports/s")
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(queued), "jobs")
	b.ReportMetric(0, "ns/op")
}
