// Package gitlab runs redfix against GitLab as production runs it: `bot
// serve` and `worker run` as processes of their own, a real NATS and
// Redis, and the test GitLab (pkg/forge/gitlab/gltest) serving the
// projects' API, their webhooks and their repositories over smart HTTP
// with token authentication. One stack serves every project at once, and
// every assertion of the suite is made on it.
package gitlab

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// Secrets the processes hold; none may come out anywhere.
const (
	botToken      = "glpat-e2eRedfixBot0123456789abcdef"
	webhookSecret = "gitlab-hook-secret-e2e-0123456789"
	readToken     = "read-token-e2e-0123456789"
	ingestToken   = "ingest-token-e2e-0123456789"
)

var binaries testsvc.Binaries

// stack is redfix on loopback against the test GitLab.
type stack struct {
	t      *testing.T
	gl     *gltest.Server
	botURL string
	bot    *testsvc.Command
	worker *testsvc.Command
}

// startStack starts Redis, NATS, `bot serve` and `worker run` against gl.
func startStack(t *testing.T, gl *gltest.Server) *stack {
	t.Helper()
	bot, worker := binaries.Build(t)
	redis := testsvc.StartRedis(t, "")
	nats := testsvc.StartNATS(t)
	s := &stack{t: t, gl: gl}
	port := testsvc.FreePort(t)
	s.botURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	cfg := fmt.Sprintf(`log: {level: debug, format: json}
http: {addr: "127.0.0.1:%d"}
nats: {url: %q, ack_wait: 1m, max_deliver: 5}
redis: {addr: %q, prefix: gitlab-e2e}
triage: {reruns: 2, report_retry_delay: 1s, concurrency: 3}
harness: {feedback_rounds: 0}
worker: {slots: 2, heartbeat: 5s}
gitlab: {url: %q, resync_interval: 0s, projects: [{name: "acme/**", branches: [main]}]}
sandbox: {mode: auto, go_cache: shared, cache_dir: %q}
`, port, nats.URL(), redis.Addr(), gl.URL, filepath.Join(t.TempDir(), "cache"))
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "redfix.yaml")
	secretFile := filepath.Join(dir, "gitlab-webhook-secret")
	for path, data := range map[string]string{cfgPath: cfg, secretFile: webhookSecret + "\n"} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "REDFIX_GITLAB_TOKEN="+botToken, "REDFIX_GITLAB_WEBHOOK_SECRET_FILE="+secretFile,
		"REDFIX_READ_TOKEN="+readToken, "REDFIX_INGEST_TOKEN="+ingestToken, "REDFIX_NODE_CACHE_DIR="+nodetest.CacheDir(t))
	data := t.TempDir()
	s.bot = testsvc.StartCommand(t, "bot", bot, append(env, "REDFIX_DATA_DIR="+filepath.Join(data, "bot")), "serve", "--config", cfgPath)
	s.worker = testsvc.StartCommand(t, "worker", worker, append(env, "REDFIX_DATA_DIR="+filepath.Join(data, "worker")), "run", "--config", cfgPath)
	testsvc.Poll(t, 2*time.Minute, "the bot answers /readyz", func() bool {
		resp, err := http.Get(s.botURL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

// hook is where the bot takes GitLab's webhooks.
func (s *stack) hook() string { return s.botURL + "/api/v1/gitlab/webhook" }

// deliver sends d as GitLab would, with secret, and returns the status.
func (s *stack) deliver(secret string, d gltest.Delivery) (int, string) {
	s.t.Helper()
	code, body, err := s.gl.Deliver(s.hook(), secret, d)
	if err != nil {
		s.t.Fatalf("deliver %s: %v", d.Event, err)
	}
	return code, body
}

// get reads a path of the bot with the read token.
func (s *stack) get(path string) string {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.botURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+readToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// mrs are copies of the merge requests of the project at path.
func (s *stack) mrs(path string) []gltest.MergeRequest {
	s.gl.Lock()
	defer s.gl.Unlock()
	p, ok := s.gl.Project(path)
	if !ok {
		return nil
	}
	var out []gltest.MergeRequest
	for _, mr := range p.MRs {
		c := *mr
		c.Notes = append([]*gltest.Note(nil), mr.Notes...)
		out = append(out, c)
	}
	return out
}

// notesBy are the bodies of the notes author wrote on merge request iid.
func (s *stack) notesBy(path string, iid int64, author string) []string {
	var out []string
	for _, mr := range s.mrs(path) {
		if mr.IID != iid {
			continue
		}
		for _, n := range mr.Notes {
			if n.Author.Username == author {
				out = append(out, n.Body)
			}
		}
	}
	return out
}

// awarded reports whether note id on merge request iid has an emoji.
func (s *stack) awarded(path string, iid, id int64) bool {
	s.gl.Lock()
	defer s.gl.Unlock()
	mr := s.gl.MR(path, iid)
	for _, n := range mr.Notes {
		if n.ID == id {
			return len(n.Awards) > 0
		}
	}
	return false
}

// leaks names where a secret shows in outputs.
func leaks(outputs map[string]string) []string {
	var found []string
	for where, text := range outputs {
		for name, secret := range map[string]string{"the GitLab token": botToken, "the webhook secret": webhookSecret, "the read token": readToken, "the ingest token": ingestToken} {
			if strings.Contains(text, secret) {
				found = append(found, name+" in "+where)
			}
		}
	}
	return found
}
