package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/server"
)

// lockedBuffer is a bytes.Buffer the demo writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// artifactDir is where a test keeps what a person may want to look at
// after it: $REDFIX_TEST_ARTIFACTS (CI sets it), else a temporary one.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("REDFIX_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// chromium runs headless Chromium with args and returns its standard
// output: in its own process group, killed with it at the end (its
// helpers included) or after a timeout.
func chromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--window-size=1400,1000"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	stdout, stderr := &cappedBuffer{max: 8 << 20}, &cappedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers left behind
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// dashboardURL waits for the demo running with --serve (its result due on
// done) to serve its dashboard, and returns its address.
func dashboardURL(t *testing.T, stdout, stderr *lockedBuffer, done chan error) string {
	t.Helper()
	serving := regexp.MustCompile(`serving +dashboard at (http://[0-9.:]+)/`)
	var url string
	testsvc.PollSeeing(t, 10*time.Minute, "the demo serves its dashboard", stdout.String, func() bool {
		if m := serving.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
			return true
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the demo ended before serving: %v\n%s\n%s", err, stdout.String(), stderr.String())
		default:
		}
		return false
	})
	return url
}

// checkDashboardInBrowser loads the dashboard a demo serves at url in a
// real headless browser: the demo's pull request is in the counts and the
// recent pull requests, the land rate is shown, and the charts are drawn.
// The screenshot is kept as an artifact.
func checkDashboardInBrowser(t *testing.T, url string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed and CI is: .ci/run installs Debian's chromium for this test")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	// The JSON API carries the demo's numbers.
	var stats server.Stats
	if err := json.Unmarshal([]byte(get(t, url+"/api/v1/stats")), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.Overall == nil || stats.Overall.Last30.Published != 1 || len(stats.PullRequests) != 1 || stats.Window == nil ||
		stats.Window.ReportsAccepted != 1 || stats.Window.ReportsTriaged != 1 || stats.Window.Queued != 1 || stats.TimeToPR == nil || stats.TimeToPR.Samples != 1 {
		b, _ := json.MarshalIndent(stats, "", "  ")
		t.Fatalf("stats after the demo:\n%s", b)
	}
	pr := stats.PullRequests[0]

	artifacts := artifactDir(t)
	dom := chromium(t, bin, "--dump-dom", url+"/")
	if err := os.WriteFile(filepath.Join(artifacts, "dashboard.html"), []byte(dom), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`id="land-rate">—`, `0 landed of 0 decided, last 30 days (1 published)`, // the demo's pull request is not decided
		`id="publish-rate">100.0%`,
		`data-chart="daily"`, `data-chart="weekly"`, `class="publish-rate"`, `class="bar"`,
		`id="recent-prs"`, pr.TaskID, // the offline policy's patch, no model reviewed it:
		`<td class="published">published <span class="unreviewed" title="no model reviewed this patch">unreviewed</span></td>`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page in the browser lacks %s", want)
		}
	}
	if n := strings.Count(dom, "<svg"); n < 3 {
		t.Errorf("%d charts rendered, want the daily, weekly and a repository's", n)
	}

	shot := filepath.Join(artifacts, "dashboard.png")
	_ = os.Remove(shot)
	chromium(t, bin, "--screenshot="+shot, url+"/")
	png, err := os.ReadFile(shot)
	if err != nil || len(png) < 10_000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s: %d bytes, %v", shot, len(png), err)
	}
	t.Log(fmt.Sprintf("dashboard screenshot: %s (%d bytes)", shot, len(png)))
}
