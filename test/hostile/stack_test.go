package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/internal/testsvc"
	"github.com/redfix/redfix/pkg/embedded"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
)

// githubToken is the token the bot and worker use on the test GitHub.
const githubToken = "ghs_hostilecorpus0123456789abcdefABCDEF"

// stack is redfix as production runs it, on loopback: a real Redis, NATS
// with JetStream, the test GitHub serving git over HTTP, and `bot serve`
// and `worker run` as processes of their own.
type stack struct {
	t       *testing.T
	w       world
	gh      *ghtest.Server
	botURL  string
	bot     *testsvc.Command
	worker  *testsvc.Command
	dataDir string
	// cacheDir holds the repositories' caches (sandbox.cache_dir).
	cacheDir string
}

// stackOptions change the stack for a scenario.
type stackOptions struct {
	// allow are more patterns for http.allow_repos (the test GitHub's
	// acme/* is always there).
	allow []string
	// triage is the triage section; empty: the corpus'.
	triage string
	// noWorker starts the bot alone.
	noWorker bool
	// gitRemotes are prefixes of plain git remotes (git_remotes) that
	// take fixes of their repositories without credentials.
	gitRemotes []string
}

// corpusTriage is the triage section of the corpus' scenarios.
const corpusTriage = "{reruns: 2, report_retry_delay: 1s, max_groups_per_report: 5, concurrency: 2}"

// startStack serves repos on the test GitHub as acme/NAME and starts the
// bot and a worker, built with the boundaries on or off.
func startStack(t *testing.T, w world, boundariesOff bool, repos ...hostileRepo) *stack {
	t.Helper()
	return startStackWith(t, w, boundariesOff, stackOptions{}, repos...)
}

// startStackWith is startStack changed by o.
func startStackWith(t *testing.T, w world, boundariesOff bool, o stackOptions, repos ...hostileRepo) *stack {
	t.Helper()
	bot, worker := binaries(t, boundariesOff)
	gh := ghtest.New(t)
	gh.AddToken(githubToken, "redfix")
	for _, r := range repos {
		gh.CreateRepo("acme", r.Name, r.Dir)
	}
	redis := testsvc.StartRedis(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: t.TempDir(), Port: testsvc.FreePort(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)

	s := &stack{t: t, w: w, gh: gh, dataDir: t.TempDir()}
	port := testsvc.FreePort(t)
	s.botURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	// The stack's own caches: what a scenario plants in them is looked
	// for there, and must not be another stack's.
	s.cacheDir = filepath.Join(t.TempDir(), "sandbox-cache")
	cacheDir := s.cacheDir
	allow := []string{strconv.Quote(gh.URL + "/acme/*")}
	for _, a := range o.allow {
		allow = append(allow, strconv.Quote(a))
	}
	if o.triage == "" {
		o.triage = corpusTriage
	}
	cfg := fmt.Sprintf(`log: {level: debug, format: json}
http: {addr: "127.0.0.1:%d", allow_repos: [%s]}
nats: {url: %q, ack_wait: 1m, max_deliver: 5}
redis: {addr: %q, prefix: hostile}
triage: %s
harness: {feedback_rounds: 0}
worker: {slots: 1, heartbeat: 5s}
publish: {mode: github}
github: {api_url: %q}
sandbox: {mode: required, go_cache: shared, cache_dir: %q}
`, port, strings.Join(allow, ", "), ns.URL(), redis.Addr(), o.triage, gh.APIURL(), cacheDir)
	if len(o.gitRemotes) > 0 {
		cfg += "git_remotes:\n"
		for _, p := range o.gitRemotes {
			cfg += fmt.Sprintf("  - prefix: %q\n", p)
		}
	}
	cfgPath := filepath.Join(t.TempDir(), "redfix.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// The NATS server's token reaches the processes as an operator's
	// would, in their environment, and is a secret that must not leak.
	w.Secrets["REDFIX_NATS_TOKEN"] = ns.Token()
	env := w.env("REDFIX_GITHUB_TOKEN="+githubToken, "REDFIX_PYTHON_INDEX_URL="+w.Index.URL+"/simple/")
	s.bot = testsvc.StartCommand(t, "bot", bot, append(env, "REDFIX_DATA_DIR="+filepath.Join(s.dataDir, "bot")), "serve", "--config", cfgPath)
	if !o.noWorker {
		s.worker = testsvc.StartCommand(t, "worker", worker, append(env, "REDFIX_DATA_DIR="+filepath.Join(s.dataDir, "worker")), "run", "--config", cfgPath)
	}
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

// post sends a report for repo at commit; it returns the status code and
// the answer.
func (s *stack) post(repo, commit string, report []byte) (int, string) {
	s.t.Helper()
	u := fmt.Sprintf("%s/api/v1/reports?repo=%s&commit=%s", s.botURL, repo, commit)
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(report))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.w.Secrets["REDFIX_INGEST_TOKEN"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("POST report: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// repoURL is where the test GitHub serves acme/name.
func (s *stack) repoURL(name string) string { return s.gh.CloneURL("acme", name) }

// get reads an API path of the bot, with the read token.
func (s *stack) get(path string) string {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.botURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.w.Secrets["REDFIX_READ_TOKEN"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// apiTask is what the task API says of a task.
type apiTask struct {
	ID          string `json:"id"`
	Repo        string `json:"repo"`
	Status      string `json:"status"`
	Reason      string `json:"reason"`
	PullRequest string `json:"pull_request"`
	Failures    []struct {
		Test string `json:"test"`
	} `json:"failures"`
}

// tasks lists the tasks of repo (its canonical URL's suffix).
func (s *stack) tasks(name string) []apiTask {
	s.t.Helper()
	var all []apiTask
	if err := json.Unmarshal([]byte(s.get("/api/v1/tasks")), &all); err != nil {
		s.t.Fatalf("tasks API: %v", err)
	}
	var out []apiTask
	for _, t := range all {
		if strings.HasSuffix(strings.TrimSuffix(t.Repo, ".git"), "/acme/"+name) {
			out = append(out, t)
		}
	}
	return out
}

// settled waits until every task of repo has a final status and returns
// them.
func (s *stack) settled(name string, timeout time.Duration) []apiTask {
	s.t.Helper()
	testsvc.Poll(s.t, timeout, "the tasks of "+name+" settle", func() bool { return s.done(name) })
	return s.tasks(name)
}

// done reports whether repo has tasks, all with a final status.
func (s *stack) done(name string) bool {
	got := s.tasks(name)
	if len(got) == 0 {
		return false
	}
	for _, t := range got {
		switch t.Status {
		case "published", "no_patch", "failed", "dropped", "over_budget":
		default:
			return false
		}
	}
	return true
}

// pulls are the pull requests opened on acme/name, with the files each
// changes.
func (s *stack) pulls(name string) []*ghtest.Pull {
	s.gh.Lock()
	defer s.gh.Unlock()
	r, ok := s.gh.Repo("acme", name)
	if !ok {
		return nil
	}
	return append([]*ghtest.Pull(nil), r.Pulls...)
}

// pullFiles lists the files a pull request's head changes against its
// base.
func (s *stack) pullFiles(name string, p *ghtest.Pull) []string {
	s.t.Helper()
	out, err := s.gh.Git("acme", name, "diff", "--name-only", p.Base+"..."+p.HeadSHA)
	if err != nil {
		s.t.Fatalf("files of pull request #%d: %v", p.Number, err)
	}
	return strings.Fields(out)
}

// outputs is everything the outside world reads of the stack: the bot's
// and the worker's logs, the API's answers and the dashboard, and every
// pull request's title, body and diff.
func (s *stack) outputs() map[string]string {
	out := map[string]string{
		"bot log":   s.bot.Output(),
		"tasks API": s.get("/api/v1/tasks"),
		"stats API": s.get("/api/v1/stats"),
		"dashboard": s.get("/"),
	}
	if s.worker != nil {
		out["worker log"] = s.worker.Output()
	}
	return out
}

// prOutputs adds each pull request of name (title, body, diff) to out.
func (s *stack) prOutputs(name string, out map[string]string) {
	for _, p := range s.pulls(name) {
		where := fmt.Sprintf("pull request #%d of %s", p.Number, name)
		out[where] = p.Title + "\n" + p.Body
		if diff, err := s.gh.Git("acme", name, "diff", p.Base+"..."+p.HeadSHA); err == nil {
			out[where+" diff"] = diff
		}
	}
}
