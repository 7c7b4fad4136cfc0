package app

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded"
	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/sandbox"
)

// TestHostileRepositoryThroughWorkerRepair runs `worker repair` on a
// repository whose tests attack the bot (testdata/hostile): they read
// /proc, dial the bot's Redis and NATS, write outside the checkout, leave a
// process behind, allocate without bound, and print credentials and an
// injection. None of it may get out, and no secret may reach any output.
func TestHostileRepositoryThroughWorkerRepair(t *testing.T) {
	clearEnv(t)
	if _, err := sandbox.New(context.Background(), sandbox.Config{Mode: sandbox.ModeRequired, CacheDir: t.TempDir()}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must confine: %v", err)
		}
		t.Skipf("this host cannot confine: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	now := time.Now().UnixNano()
	nonce := strconv.FormatInt(now, 36)
	sleepMarker := fmt.Sprintf("%d.%06d", 900+os.Getpid()%100, now%1000000)

	// The bot's fake secrets: in its environment, and one in a file.
	secrets := map[string]string{
		"REDFIX_INGEST_TOKEN":   "ingest-tok-" + nonce,
		"OPENAI_API_KEY":        "sk-fake-openai-" + nonce + "-0123456789",
		"REDFIX_REDIS_PASSWORD": "redis-pw-" + nonce,
	}
	secretDir := t.TempDir()
	webhook := "whsec-" + nonce
	if err := os.WriteFile(filepath.Join(secretDir, "webhook"), []byte(webhook+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REDFIX_WEBHOOK_SECRET_FILE", filepath.Join(secretDir, "webhook"))
	secrets["REDFIX_WEBHOOK_SECRET"] = webhook
	t.Setenv("REDFIX_SANDBOX", "required")
	t.Setenv("REDFIX_SANDBOX_MEMORY_MB", "2048")
	t.Setenv("REDFIX_LOG_LEVEL", "debug")
	t.Setenv("REDFIX_LOG_FORMAT", "json")

	// The servers the bot uses: the real Redis when there is one, and a
	// NATS server listening on loopback.
	var rdb *redis.Client
	if addr := os.Getenv("REDFIX_TEST_REDIS_ADDR"); addr != "" {
		rdb = redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Del(context.Background(), "hostile:"+nonce); rdb.Close() })
	} else {
		rdb = embeddedtest.Redis(t)
	}
	ns, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	nc, err := nats.Connect(ns.URL(), nats.Token(ns.Token()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	published := make(chan *nats.Msg, 16)
	if _, err := nc.ChanSubscribe("hostile.>", published); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()

	// The repository: Add breaks in its second commit; its tests are hostile.
	src := filepath.Join(t.TempDir(), "hostile")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	hostile, err := os.ReadFile("testdata/hostile/hostile_test.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	var quoted []string
	for _, v := range secrets {
		quoted = append(quoted, strconv.Quote(v))
	}
	natsAddr := strings.TrimPrefix(ns.URL(), "nats://")
	files := map[string]string{
		"go.mod":             "module example.com/hostile\n\ngo 1.22\n",
		"calc.go":            "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
		"calc_test.go":       "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tfor _, l := range evidence {\n\t\t\tt.Log(l)\n\t\t}\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
		"hostile_test.go":    strings.NewReplacer("{{NONCE}}", nonce, "{{SECRETS}}", strings.Join(quoted, ", "), "{{SLEEP}}", sleepMarker).Replace(string(hostile)),
		"testdata/addrs.txt": fmt.Sprintf("redis %s\nnats %s\noutside %s\n", rdb.Options().Addr, natsAddr, outside),
	}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := repo.CommitAll(ctx, "calc: Add"); err != nil {
		t.Fatal(err)
	}
	// The culprit adds Sub and breaks Add: the fix undoes one hunk of it,
	// not the whole (that would be a revert, which the gates refuse).
	if err := os.WriteFile(filepath.Join(src, "calc.go"), []byte("package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	blame, err := repo.CommitAll(ctx, "calc: add Sub, tidy Add")
	if err != nil {
		t.Fatal(err)
	}

	// worker repair runs as a process of its own, started with the
	// secrets in its environment, as an operator would start it: that
	// environment is what /proc/<pid>/environ shows.
	out := filepath.Join(t.TempDir(), "prs")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	c := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperWorkerRepair$")
	c.Env = append(os.Environ(), "REDFIX_HOSTILE_HELPER_ARGS="+strings.Join([]string{"--repo", src, "--test", "TestAdd", "--blame", blame, "--out", out}, "\n"))
	for k, v := range secrets {
		if k != "REDFIX_WEBHOOK_SECRET" { // that one is read from its file
			c.Env = append(c.Env, k+"="+v)
		}
	}
	c.Stdout, c.Stderr = &stdout, &stderr
	err = c.Run()
	took := time.Since(start)
	t.Logf("worker repair took %s", took.Round(time.Second))
	if err != nil {
		t.Fatalf("repair: %v\nstdout:\n%s\nstderr:\n%.20000s", err, stdout.String(), stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatal("the run did not end within its limit")
	}

	// Everything the outside world reads.
	outputs := map[string]string{"stdout": stdout.String(), "logs": stderr.String()}
	_ = filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			outputs[p] = string(b)
		}
		return nil
	})
	all := strings.Join(func() []string {
		var s []string
		for _, v := range outputs {
			s = append(s, v)
		}
		return s
	}(), "\n")
	pr := readPR(t, out)

	// The hostile tests ran, and what they did reached the outputs: the
	// checks below are not vacuous.
	if !strings.Contains(pr.body+pr.trajectory, "HOSTILE ran "+nonce) {
		t.Fatalf("the hostile tests' evidence is in no output:\n%s", pr.body)
	}
	// Writes to /tmp, $HOME and /dev/shm land in the sandbox's private
	// ones (checked on the host below); these must be refused outright.
	for _, bad := range []string{"HOSTILE leak", "HOSTILE dial redis ok", "HOSTILE dial nats ok", "HOSTILE wrote " + outside, "HOSTILE wrote /var/tmp", "HOSTILE hog survived"} {
		if strings.Contains(all, bad) {
			t.Errorf("the hostile tests got out: %q in the outputs", bad)
		}
	}
	for _, want := range []string{"HOSTILE dial redis refused", "HOSTILE dial nats refused", "HOSTILE hog killed", "HOSTILE orphan started"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the outputs", want)
		}
	}
	if i := strings.Index(all, "HOSTILE procs visible "); i >= 0 {
		var n int
		fmt.Sscanf(all[i+len("HOSTILE procs visible "):], "%d", &n)
		if n == 0 || n > 10 {
			t.Errorf("the hostile tests saw %d processes; want only their sandbox's few", n)
		}
	}

	// No secret, plain or hex-encoded, in any output.
	for name, v := range secrets {
		for label, enc := range map[string]string{"plain": v, "hex": hex.EncodeToString([]byte(v))} {
			for where, text := range outputs {
				if strings.Contains(text, enc) {
					t.Errorf("%s (%s) appears in %s", name, label, where)
				}
			}
		}
	}
	for _, shaped := range []string{"AKIAQ3EXAMPLEFAKE7ZK", "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"} {
		for where, text := range outputs {
			if strings.Contains(text, shaped) {
				t.Errorf("a pattern-shaped credential appears in %s", where)
			}
		}
	}

	// Nothing reached the servers, nothing was written outside.
	if n, err := rdb.Exists(context.Background(), "hostile:"+nonce).Result(); err != nil || n != 0 {
		t.Errorf("the hostile tests wrote to Redis (exists=%d, %v)", n, err)
	}
	_ = nc.Flush()
	select {
	case m := <-published:
		t.Errorf("the hostile tests published on NATS: %s %q", m.Subject, m.Data)
	default:
	}
	home, _ := os.UserHomeDir()
	for _, dir := range []string{"/tmp", home, outside, "/var/tmp", "/dev/shm"} {
		if _, err := os.Stat(filepath.Join(dir, "escape-"+nonce)); err == nil {
			os.Remove(filepath.Join(dir, "escape-"+nonce))
			t.Errorf("a file was written in %s", dir)
		}
	}

	// No process outlived the run.
	var left []string
	testsvc.PollSeeing(t, 30*time.Second, "no process outlives the run", func() string { return fmt.Sprintf("processes %v outlived the run", left) }, func() bool {
		left = processesWith("sleep " + sleepMarker)
		return len(left) == 0
	})
}

// TestHelperWorkerRepair is not a test: run as a child by
// TestHostileRepositoryThroughWorkerRepair, it is `worker repair`.
func TestHelperWorkerRepair(t *testing.T) {
	args := os.Getenv("REDFIX_HOSTILE_HELPER_ARGS")
	if args == "" {
		t.Skip("helper process only")
	}
	if err := Repair(context.Background(), strings.Split(args, "\n"), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "repair:", err)
		os.Exit(ExitCode(err))
	}
	os.Exit(0)
}

// processesWith lists the processes whose command line contains s.
func processesWith(s string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			found = append(found, e.Name())
		}
	}
	return found
}
