package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/ingest/ingestbench"
	"github.com/redfix/redfix/pkg/server"
)

// benchRepo is the repository the benchmark's reports name, on a plain
// git remote the benchmark configures (benchRemote), so that its fix would
// have a way to be delivered.
const (
	benchRemote = "https://git.example/bench/"
	benchRepo   = benchRemote + "app"
)

// BenchIngest is `bot bench-ingest`: it starts a nats-server and a
// redis-server (child processes, binaries on PATH), the bot's HTTP handler
// on a loopback port against them (as `bot serve` runs it, the triage loop
// left out: it would compete for the same cores), posts --reports go test
// -json reports of --size bytes, --concurrency at a time, then publishes
// the same bytes straight to JetStream on the same server, and prints both
// rates, their p50 and p99, and the ratio. --cpuprofile, --blockprofile and
// --mutexprofile write profiles of the ingest API's run.
func BenchIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("reports", 20000, "reports posted, and messages published")
	conc := fs.Int("concurrency", 8, "requests (and publishes) in flight at once")
	size := fs.Int("size", 6<<10, "bytes of each report")
	warm := fs.Int("warmup", 500, "reports posted and published before the measured runs")
	cpu := fs.String("cpuprofile", "", "write a CPU profile of the ingest API's run to this file")
	block := fs.String("blockprofile", "", "write a blocking profile of the ingest API's run to this file")
	mutex := fs.String("mutexprofile", "", "write a mutex contention profile of the ingest API's run to this file")
	logFile := fs.String("log", "", "the bot's log (JSON, level info, as in production); a file in a temporary directory by default")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *conc < 1 || *size < 512 || *warm < 0 {
		return Usage("bench-ingest: --reports and --concurrency must be at least 1, --size at least 512, --warmup at least 0")
	}
	dir, err := os.MkdirTemp("", "redfix-bench-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := ingestbench.StartServers(ctx, dir)
	if err != nil {
		return err
	}
	defer srv.Close()

	addr, stopBot, err := startBenchBot(ctx, dir, srv, *logFile)
	if err != nil {
		return err
	}
	defer stopBot()

	// Each poster writes its report into a buffer of its own: a copy of
	// 6 KB and nine digits, not a report made whole each time.
	reports := ingestbench.NewReports(*size)
	post := ingestbench.Poster{Addr: addr, Repo: benchRepo, Commit: "0123456789abcdef0123456789abcdef01234567"}
	nc, err := nats.Connect(srv.NATSURL, nats.Name("redfix-bench"))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", srv.NATSURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	// Reports are numbered apart: the warm-up's, the measured ones; the raw
	// stream is another stream, so it may take the same bytes again.
	if *warm > 0 {
		if f := post.Post(ctx, reports, *n, *warm, *conc); f.Errors > 0 {
			return fmt.Errorf("warm-up: %d of %d reports failed: %s", f.Errors, *warm, f.FirstError)
		}
	}
	stop, err := startProfiles(*cpu, *block, *mutex)
	if err != nil {
		return err
	}
	pids := srv.Pids()
	procs := []ingestbench.Process{{Name: "redfix (handler and client)"}, {Name: "nats-server", Pid: pids[0]}, {Name: "redis-server", Pid: pids[1]}}
	res := ingestbench.Result{Reports: *n, Concurrency: *conc, Bytes: reports.Len(), Procs: procs}
	res.API = ingestbench.Measure(procs, func() ingestbench.Figures { return post.Post(ctx, reports, 0, *n, *conc) })
	if err := stop(); err != nil {
		return err
	}
	if *warm > 0 {
		if _, err := ingestbench.Publish(ctx, js, reports, *n, *warm, *conc); err != nil {
			return err
		}
	}
	res.Raw = ingestbench.Measure(procs, func() ingestbench.Figures {
		var f ingestbench.Figures
		f, err = ingestbench.Publish(ctx, js, reports, 0, *n, *conc)
		return f
	})
	if err != nil {
		return err
	}
	if err := res.Write(stdout); err != nil {
		return err
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(stdout, "load average: %s", load)
	}
	fmt.Fprintf(stdout, "nats-server %s, %d CPUs\n", nc.ConnectedServerVersion(), runtime.NumCPU())
	if res.API.Errors > 0 || res.Raw.Errors > 0 {
		return errors.New("bench-ingest: some reports or publishes failed (see above)")
	}
	return nil
}

// startBenchBot starts a bot on the benchmark's servers srv, its data
// under dir and its log (JSON, level info, as in production) in logFile
// (under dir when ""), serving its API on a loopback port: addr; stop
// stops it.
func startBenchBot(ctx context.Context, dir string, srv *ingestbench.Servers, logFile string) (addr string, stop func(), err error) {
	cfg := config.Default()
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.NATS.URL, cfg.Redis.Addr = srv.NATSURL, srv.RedisAddr
	cfg.HTTP.AllowRepos = []string{benchRepo}
	cfg.GitRemotes = []config.GitRemote{{Prefix: benchRemote}}
	cfg.Log.Format, cfg.Log.Level = "json", "info"
	if logFile == "" {
		logFile = filepath.Join(dir, "bot.log")
	}
	lf, err := os.Create(logFile)
	if err != nil {
		return "", nil, err
	}
	log, err := cfg.Log.Build(lf, nil)
	if err != nil {
		lf.Close()
		return "", nil, err
	}
	sys, err := Start(ctx, cfg, log)
	if err != nil {
		lf.Close()
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sys.Close()
		lf.Close()
		return "", nil, err
	}
	hs := server.HTTPServer(sys.Handler(cfg), server.DefaultTimeouts)
	go func() { _ = hs.Serve(ln) }()
	return ln.Addr().String(), func() {
		hs.Close()
		sys.Close()
		lf.Close()
	}, nil
}

// startProfiles starts the profiles asked for; stop writes them.
func startProfiles(cpu, block, mutex string) (stop func() error, err error) {
	var cf *os.File
	if cpu != "" {
		if cf, err = os.Create(cpu); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cf); err != nil {
			cf.Close()
			return nil, fmt.Errorf("start the CPU profile: %w", err)
		}
	}
	if block != "" {
		runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	}
	if mutex != "" {
		runtime.SetMutexProfileFraction(5)
	}
	return func() error {
		var errs []error
		if cf != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cf.Close())
		}
		for _, p := range []struct{ name, file string }{{"block", block}, {"mutex", mutex}} {
			if p.file == "" {
				continue
			}
			f, err := os.Create(p.file)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, pprof.Lookup(p.name).WriteTo(f, 0), f.Close())
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		return errors.Join(errs...)
	}, nil
}
