package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/task"
)

// commands are cmd/bot and cmd/worker, built once for the whole go test
// run (testsvc.Binaries).
var commands testsvc.Binaries

func binary(t testing.TB, name string) string {
	t.Helper()
	bot, worker := commands.Build(t)
	if name == "bot" {
		return bot
	}
	return worker
}

// writeConfig writes cfg's settings that the commands read from a file.
func writeConfig(t testing.TB, cfg config.Config) string {
	t.Helper()
	y := fmt.Sprintf(`data_dir: %q
log: {level: warn, format: console}
http: {addr: %q, allow_repos: [%q], ingest_token: %q}
nats: {url: %q, ack_wait: %s, max_deliver: 5}
redis: {addr: %q, prefix: %q}
triage: {reruns: %d, claim_ttl: %s, report_ack_wait: %s, report_retry_delay: %s}
worker: {slots: 1, heartbeat: %s}
publish: {mode: local, dir: %q}
`, cfg.DataDir, cfg.HTTP.Addr, cfg.HTTP.AllowRepos[0], cfg.HTTP.IngestToken, cfg.NATS.URL, cfg.NATS.AckWait, cfg.Redis.Addr, cfg.Redis.Prefix,
		cfg.Triage.Reruns, cfg.Triage.ClaimTTL, cfg.Triage.ReportAckWait, cfg.Triage.ReportRetryDelay, cfg.Worker.Heartbeat, cfg.Publish.Dir)
	p := filepath.Join(t.TempDir(), "redfix.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// proc is a command run as a real process. Its output goes to a file of
// the test's (a process that dies takes nothing with it), whose tail the
// test prints when it fails.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	// killed is set when the test kills the process itself; told, when the
	// test has printed its exit already.
	killed, told atomic.Bool
}

func startProc(t testing.TB, bin, dataDir, cfgPath string, args ...string) *proc {
	t.Helper()
	name := filepath.Base(bin) + " " + args[0]
	out, err := os.CreateTemp(t.TempDir(), strings.ReplaceAll(name, " ", "-")+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(bin, append(args, "--config", cfgPath)...)
	cmd.Env = append(os.Environ(), "REDFIX_DATA_DIR="+dataDir)
	cmd.Stdout, cmd.Stderr = out, out
	// Killed with the test binary (a go test timeout leaves no process
	// behind).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{name: fmt.Sprintf("%s (pid %d)", name, cmd.Process.Pid), cmd: cmd, log: out.Name(), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		// One that died by itself is said so first, whatever the test's
		// result: it is what a failure further on comes from.
		if p.exited() {
			if p.told.Load() {
				return
			}
			t.Logf("%s exited by itself (%v); the end of its output:\n%s", p.name, cmd.ProcessState, p.tail(4000))
			return
		}
		p.killed.Store(true)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output (end):\n%s", p.name, p.tail(4000))
		}
	})
	return p
}

// kill9 kills the process alone (not its group), as the OOM killer or a
// node failure would, and waits for it to be gone.
func (p *proc) kill9(t testing.TB) {
	t.Helper()
	p.killed.Store(true)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// exited reports whether the process ended without the test killing it.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return !p.killed.Load()
	default:
		return false
	}
}

// tail is the last n bytes of the process's output so far.
func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	return tail(string(b), n)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// processesUnder lists the processes whose working directory is under dir.
func processesUnder(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// kill -9 of a worker process mid-job: the job goes to another worker
// after its ack wait, is finished once, and one pull request is published;
// nothing the killed worker started is left running.
func TestWorkerKilledMidJob(t *testing.T) {
	n := startNATS(t)
	r := startRedis(t)
	s := sample(t)
	cfg := botConfig(t, n.URL(), r.Addr())
	cfg.NATS.AckWait = 4 * time.Second
	cfg.Worker.Heartbeat = time.Second
	cfg.Publish.Dir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	b := startBot(t, cfg)
	workerBin := binary(t, "worker")
	cfgPath := writeConfig(t, cfg)

	code, _ := post(t, b.api.URL, s.Dir, s.Head, s.Report)
	if code != 202 {
		t.Fatalf("post: %d", code)
	}
	testsvc.Poll(t, 3*time.Minute, "the report was not triaged", func() bool { return len(b.queued()) == 1 })
	taskID := b.queued()[0].TaskID
	ctx := context.Background()
	status := func() task.Status {
		tk, err := b.sys.Store.GetTask(ctx, taskID)
		if err != nil {
			return ""
		}
		return tk.Status
	}

	dir1 := t.TempDir()
	w1 := startProc(t, workerBin, dir1, cfgPath, "run")
	testsvc.Poll(t, 2*time.Minute, "the first worker did not start the job", func() bool { return status() == task.StatusRunning })
	w1.kill9(t)
	testsvc.Poll(t, 30*time.Second, "processes of the killed worker live on", func() bool { return len(processesUnder(dir1)) == 0 })

	dir2 := t.TempDir()
	startProc(t, workerBin, dir2, cfgPath, "run")
	testsvc.Poll(t, 4*time.Minute, "the job was not finished by the second worker", func() bool { return status() == task.StatusPublished })

	entries, err := os.ReadDir(cfg.Publish.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var prs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(cfg.Publish.Dir, e.Name(), publish.FilePullRequest)); err == nil {
			prs = append(prs, e.Name())
		}
	}
	if len(prs) != 1 {
		t.Fatalf("pull requests %v, want exactly one", prs)
	}
	testsvc.Poll(t, 30*time.Second, "the job is still on the queue", func() bool {
		lag, err := b.sys.Jobs.Lag(ctx)
		return err == nil && lag == 0
	})
	if left := processesUnder(dir1); len(left) != 0 {
		t.Fatalf("orphans of the killed worker: %v", left)
	}
}

// kill -9 of the bot mid-triage: its group claim expires instead of
// pointing at a task that never comes, and the failure is triaged again.
func TestBotKilledMidTriage(t *testing.T) {
	n := startNATS(t)
	r := startRedis(t)
	s := sample(t)
	cfg := botConfig(t, n.URL(), r.Addr())
	cfg.Triage.ClaimTTL = 6 * time.Second
	cfg.Triage.ReportAckWait = 3 * time.Second
	cfg.Triage.Reruns = 5
	cfg.Publish.Dir = t.TempDir()
	botBin := binary(t, "bot")

	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	st := store.New(rdb, cfg.Redis.Prefix)
	ctx := context.Background()
	claimKeys := func() []string {
		keys, _ := rdb.Keys(ctx, cfg.Redis.Prefix+":group:*").Result()
		return keys
	}

	port1 := freePort(t)
	cfg.HTTP.Addr = fmt.Sprintf("127.0.0.1:%d", port1)
	b1 := startProc(t, botBin, t.TempDir(), writeConfig(t, cfg), "serve")
	base1 := "http://" + cfg.HTTP.Addr
	testsvc.Poll(t, time.Minute, "the first bot does not answer", func() bool { return get(base1+"/healthz") == 200 })
	if code, _ := post(t, base1, s.Dir, s.Head, s.Report); code != 202 {
		t.Fatalf("post: %d", code)
	}
	testsvc.Poll(t, 2*time.Minute, "the first bot did not claim the group", func() bool { return len(claimKeys()) == 1 })
	fp := strings.TrimPrefix(claimKeys()[0], cfg.Redis.Prefix+":group:")
	b1.kill9(t)

	owner, ttl, ok, err := st.GroupClaim(ctx, fp)
	if err != nil {
		t.Fatal(err)
	}
	if ok && (ttl <= 0 || ttl > cfg.Triage.ClaimTTL) {
		t.Fatalf("the dead bot's claim (owner %s) has life %s, want at most the claim TTL %s", owner, ttl, cfg.Triage.ClaimTTL)
	}

	port2 := freePort(t)
	cfg.HTTP.Addr = fmt.Sprintf("127.0.0.1:%d", port2)
	startProc(t, botBin, t.TempDir(), writeConfig(t, cfg), "serve")
	base2 := "http://" + cfg.HTTP.Addr
	testsvc.Poll(t, time.Minute, "the second bot does not answer", func() bool { return get(base2+"/healthz") == 200 })
	// CI reports the same failure again, on the commit before.
	if code, _ := post(t, base2, s.Dir, s.Commits[len(s.Commits)-2], s.Report); code != 202 {
		t.Fatalf("second post: %d", code)
	}
	// The failure is triaged again: a task for its group is queued, and
	// the group's claim names a task that exists.
	testsvc.Poll(t, 4*time.Minute, "the failure was not triaged again after the bot died", func() bool {
		owner, _, ok, err := st.GroupClaim(ctx, fp)
		if err != nil || !ok {
			return false
		}
		tk, err := st.GetTask(ctx, owner)
		return err == nil && tk.Status == task.StatusQueued
	})
}

func get(url string) int {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
