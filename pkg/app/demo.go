package app

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/demo"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/server"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

// stagePrinter prints the demo's stages for a person, one line each.
type stagePrinter struct {
	mu sync.Mutex
	w  io.Writer
	t0 time.Time
}

func (p *stagePrinter) print(stage, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%5.1fs] %-9s %s\n", time.Since(p.t0).Seconds(), stage, fmt.Sprintf(format, args...))
}

// Demo builds the sample repository and takes its CI failure through
// ingest, triage, the queue, a worker, the gates and the local publisher,
// all in this process.
func Demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newCommandLine("demo", stderr, os.Getenv)
	out := fs.String("out", "redfix-demo", "directory for the sample repository and the pull requests (must not exist or be empty)")
	timeout := fs.Duration("timeout", 15*time.Minute, "give up on the demo after this long")
	serve := fs.String("serve", "", "after the demo, keep the bot and its dashboard up at this address (host:port) until interrupted")
	sampleLang := fs.String("lang", demo.Languages()[0], "the sample repository's language: "+strings.Join(demo.Languages(), " or "))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := demo.CheckLanguage(*sampleLang); err != nil {
		return Usage("demo: --lang: " + err.Error())
	}
	cfg, log, err := fs.load(stderr, demoConfig(stderr))
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	// Listen first: an address beyond loopback with no ingest token is
	// refused as `bot serve` refuses it, before anything is built.
	ln, err := listen(cfg, cmp.Or(*serve, "127.0.0.1:0"), log)
	if err != nil {
		return err
	}
	defer ln.Close()

	outDir, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	// A throwaway data directory of this run's; the build caches outlive it.
	cleanup, err := cfg.RunDir("demo-", log)
	if err != nil {
		return err
	}
	defer cleanup()
	// The demo runs its own sample repository only: one build cache for
	// every run of it, wherever its sample is written.
	cfg.Sandbox.GoCache = "shared"
	cfg.Publish.Dir = outDir
	base, sbox, err := confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	// The timeout bounds the demo; the servers and loops live on base, so
	// that --serve keeps them up after it.
	ctx, cancel := context.WithTimeout(base, *timeout)
	defer cancel()

	// The stages name tests, commits and what the gates found.
	p := &stagePrinter{w: termsafe.NewWriter(stdout), t0: time.Now()}
	p.print("start", "redfix demo → %s; %s; sandbox: %s", outDir, demoPolicy(cfg), sbox)

	// The sample's driver is chosen from its files as any repository's is;
	// its CI report and the check of the published branch run through it.
	drivers, err := languages(cfg, log)
	if err != nil {
		return err
	}
	sample, err := buildDemoSample(ctx, p, filepath.Join(outDir, "repo"), demo.Options{Lang: *sampleLang, Drivers: drivers})
	if err != nil {
		return err
	}

	sys, pipe, err := startDemoSystem(base, &cfg, log, sbox, ln.Addr(), sample, p, stderr)
	if err != nil {
		return err
	}
	defer sys.Close()
	defer runDemo(base, cfg, log, sys, pipe, ln, p)()

	// Ingest: CI posts its report to the bot, as any CI would. The demo
	// names the delivery itself, so that its wait for the triage is
	// registered before the report can be triaged.
	baseURL := "http://" + ln.Addr().String()
	delivery := fmt.Sprintf("demo-%d", time.Now().UnixNano())
	wait := sys.Expect(delivery)
	defer wait.Release()
	if err := postDemoReport(ctx, cfg, p, baseURL, delivery, sample); err != nil {
		return err
	}
	tasks, err := wait.Wait(ctx)
	if err != nil {
		return err
	}
	result := demoResults(ctx, p, sample, tasks)
	if result != nil && !errors.Is(result, ErrNoPatch) {
		return result
	}
	if *serve == "" {
		p.print("done", "dashboard was at %s/ ; pull requests under %s", baseURL, outDir)
		return result
	}
	p.print("serving", "dashboard at %s/ (JSON at %s/api/v1/stats); pull requests under %s; interrupt to stop", baseURL, baseURL, outDir)
	<-base.Done()
	return result
}

// startDemoSystem starts the demo's bot and worker in process, on base;
// cfg's API is opened to the sample's repository alone (and its
// dashboard to reads on loopback), and the pipeline prints its stages.
func startDemoSystem(base context.Context, cfg *config.Config, log *zap.Logger, sbox sandbox.Status, addr net.Addr, sample demo.Sample, p *stagePrinter, stderr io.Writer) (*System, *worker.Pipeline, error) {
	// The demo's API accepts its own repository, and only that.
	cfg.HTTP.AllowRepos = []string{sample.Dir}
	// Its dashboard reads with no setup on loopback; on another address
	// reading follows `bot serve`'s rule.
	cfg.HTTP.ReadOpen = cfg.HTTP.ReadOpen || loopback(addr) && cfg.HTTP.ReadToken == "" && cfg.HTTP.TrustedUserHeader == ""
	sys, err := Start(base, *cfg, log)
	if err != nil {
		return nil, nil, err
	}
	sys.SetSandbox(sbox)
	// Triage's reproduction and bisection are the demo's longest quiet
	// stretch: on a terminal, a line per test run on stderr.
	sys.TriageRunner = triage.ReportRuns(nil, bench.StageLines(stderr))
	p.print("servers", "embedded NATS JetStream in process (store on disk, no port), embedded Redis protocol at %s; each needs a secret of this run's", sys.RedisAddr)

	pipe, err := sys.NewPipeline(*cfg)
	if err != nil {
		sys.Close()
		return nil, nil, err
	}
	pipe.Progress = func(stage, detail string) { p.print(stage, "%s", detail) }
	return sys, pipe, nil
}

// demoPolicy says who repairs and reviews in the demo.
func demoPolicy(cfg config.Config) string {
	if cfg.LLM.Enabled() {
		return "LLM policy and judge: " + cfg.LLM.Model
	}
	return "offline policy (no model configured; the judge will not run)"
}

// demoConfig is the demo's configuration: the embedded default whatever
// servers are configured, and a log of warnings and errors beside its
// stage lines.
func demoConfig(stderr io.Writer) func(*config.Config) {
	return func(cfg *config.Config) {
		if cfg.NATS.URL != "" || cfg.Redis.External() {
			// The demo is the embedded default; it never touches real servers.
			fmt.Fprintln(stderr, "demo: ignoring the configured NATS and Redis; the demo runs its own in process")
			cfg.NATS.URL, cfg.NATS.URLs, cfg.NATS.Replicas = "", nil, 1
			cfg.Redis.Addr, cfg.Redis.Sentinel, cfg.Redis.ClusterAddrs, cfg.Redis.WaitReplicas = "", config.RedisSentinel{}, nil, 0
		}
		if cfg.Log.Level == "info" {
			// Stage lines tell the story; the log keeps warnings and errors.
			cfg.Log.Level = "warn"
		}
	}
}

// buildDemoSample writes the sample repository at dir and prints what its
// CI saw.
func buildDemoSample(ctx context.Context, p *stagePrinter, dir string, opt demo.Options) (demo.Sample, error) {
	sample, err := demo.BuildWith(ctx, dir, opt)
	if err != nil {
		return sample, err
	}
	rep, err := report.Parse(sample.Report)
	if err != nil {
		return sample, fmt.Errorf("sample CI report: %w", err)
	}
	p.print("ci", "sample repository %s: %d commits; CI at %s: %d tests, %d failing", sample.Dir, len(sample.Commits), task.Short(sample.Head), rep.Total, len(rep.Failures))
	for _, f := range rep.Failures {
		p.print("ci", "  FAIL %s: %s", f.ID(), f.Message)
	}
	return sample, nil
}

// runDemo serves the bot's API on ln and runs the triage and worker loops
// of sys until the returned stop is called (on base, so that --serve
// keeps them up after the demo's timeout).
func runDemo(base context.Context, cfg config.Config, log *zap.Logger, sys *System, pipe *worker.Pipeline, ln net.Listener, p *stagePrinter) (stop func()) {
	srv := server.HTTPServer(sys.Handler(cfg), server.DefaultTimeouts)
	var wg sync.WaitGroup
	runCtx, stopRun := context.WithCancel(base)
	wg.Add(3)
	go func() { defer wg.Done(); _ = srv.Serve(ln) }()
	go func() {
		defer wg.Done()
		if err := sys.RunTriage(runCtx, cfg, func(o TriageEvent) { p.print("triage", "%s", describeOutcome(o)) }); err != nil {
			log.Error("triage loop", zap.Error(err))
		}
	}()
	go func() {
		defer wg.Done()
		if err := sys.RunWorker(runCtx, cfg, pipe); err != nil {
			log.Error("worker loop", zap.Error(err))
		}
	}()
	return func() {
		stopRun()
		shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(shutdown)
		done()
		wg.Wait()
	}
}

// postDemoReport posts the sample's CI report to the bot at baseURL as a
// CI would, under the delivery id the demo waits for.
func postDemoReport(ctx context.Context, cfg config.Config, p *stagePrinter, baseURL, delivery string, sample demo.Sample) error {
	q := url.Values{"repo": {sample.Dir}, "commit": {sample.Head}, "good": {sample.Good}, "branch": {"main"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/api/v1/reports?"+q.Encode(), bytes.NewReader(sample.Report))
	if err != nil {
		return fmt.Errorf("post report: %w", err)
	}
	req.Header.Set("Content-Type", reportType(sample.Report))
	req.Header.Set("X-Redfix-Delivery", delivery)
	if cfg.HTTP.IngestToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.HTTP.IngestToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("post report: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("post report: %s: %s", resp.Status, body)
	}
	var accepted struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &accepted)
	p.print("ingest", "POST %s/api/v1/reports → %s, stored on JetStream as %s", baseURL, resp.Status, accepted.ID)
	return nil
}

// demoResults prints the demo's tasks and checks each published fix's
// branch (verify): ErrNoPatch when none was published.
func demoResults(ctx context.Context, p *stagePrinter, sample demo.Sample, tasks []task.Task) error {
	published := 0
	for _, t := range tasks {
		switch t.Status {
		case task.StatusPublished:
			published++
			if err := verify(ctx, p, sample, t); err != nil {
				return err
			}
		default:
			p.print("result", "task %s: %s: %s", t.ID, t.Status, t.Reason)
		}
	}
	if published == 0 {
		return ErrNoPatch
	}
	return nil
}

// reportType is the media type of a CI report: JUnit XML or go test -json.
func reportType(data []byte) string {
	if b := bytes.TrimSpace(data); len(b) > 0 && b[0] == '<' {
		return "application/xml"
	}
	return "application/json"
}

// verify shows, for a person, that the branch fixes what main breaks: the
// sample's language driver runs all its tests at each.
func verify(ctx context.Context, p *stagePrinter, sample demo.Sample, t task.Task) error {
	branch := publish.Branch(t)
	repoDir := sample.Dir
	repo := gitrepo.Repo{Dir: repoDir}
	check := func(rev string) (bool, error) {
		tmp, err := os.MkdirTemp("", "redfix-verify-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(tmp)
		if _, err := repo.Git(ctx, "worktree", "add", "-q", "--detach", tmp, rev); err != nil {
			return false, err
		}
		defer repo.Git(context.WithoutCancel(ctx), "worktree", "remove", "--force", tmp) //nolint:errcheck
		rctx := sandbox.WithRepo(ctx, repoDir)
		if err := sample.Driver.Setup(rctx, tmp); err != nil {
			return false, err
		}
		o, err := sample.Driver.RunPackages(rctx, tmp, sample.Packages)
		if err != nil {
			return false, err
		}
		return o.OK(), nil
	}
	mainOK, err := check("main")
	if err != nil {
		return fmt.Errorf("verify main: %w", err)
	}
	branchOK, err := check(branch)
	if err != nil {
		return fmt.Errorf("verify %s: %w", branch, err)
	}
	verdict := func(ok bool) string {
		if ok {
			return "passes"
		}
		return "fails"
	}
	p.print("verify", "%s %s at main and %s at %s", sample.Command, verdict(mainOK), verdict(branchOK), branch)
	p.print("result", "pull request: %s", strings.TrimPrefix(t.PullRequest, "file://"))
	if mainOK || !branchOK {
		return errors.New("verify: the published branch does not turn main's failure green")
	}
	return nil
}

// describeOutcome says in one line what triage did with a group.
func describeOutcome(o TriageEvent) string {
	tests := strings.Join(o.Tests, ", ")
	if o.Task == nil || o.Status == task.StatusDropped {
		return fmt.Sprintf("%s: dropped: %s (%d test runs)", tests, o.Reason, o.TestRuns)
	}
	t := o.Task
	return fmt.Sprintf("%s: %s (%d/%d runs failed); bisected %s..%s in %d steps to %s %q by %s; queued job %s (%d test runs)",
		tests, t.Flakiness.Verdict, t.Flakiness.Failures, t.Flakiness.Runs,
		task.Short(t.Bisection.Good), task.Short(t.Bisection.Bad), t.Bisection.Steps,
		task.Short(t.Bisection.Blame), t.Bisection.Subject, t.Bisection.Author, task.Short(o.Fingerprint), o.TestRuns)
}
