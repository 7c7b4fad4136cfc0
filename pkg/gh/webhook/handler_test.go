package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/gh/ghtest"
	"github.com/redfix/redfix/pkg/ingest"
)

const secret = "It's a Secret to Everybody"

// examples are GitHub's published example payloads (npm
// @octokit/webhooks-examples, installed by .ci/run), by event name, as the
// bytes GitHub would send.
func examples(t *testing.T) map[string][]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(ghtest.WebhookExamples(t))
	if err != nil {
		t.Fatal(err)
	}
	var all []struct {
		Name     string            `json:"name"`
		Examples []json.RawMessage `json:"examples"`
	}
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	m := map[string][]json.RawMessage{}
	for _, e := range all {
		m[e.Name] = e.Examples
	}
	return m
}

// example is the first published example of event whose action is action
// ("" for any).
func example(t *testing.T, ex map[string][]json.RawMessage, event, action string) json.RawMessage {
	t.Helper()
	for _, p := range ex[event] {
		var a struct{ Action string }
		if json.Unmarshal(p, &a) == nil && (action == "" || a.Action == action) {
			return p
		}
	}
	t.Fatalf("no published %s example with action %q", event, action)
	return nil
}

// edit changes a published payload: set is called on its decoded form.
func edit(t *testing.T, p json.RawMessage, set func(m map[string]any)) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatal(err)
	}
	set(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func sign(body []byte, key string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

type fixture struct {
	js     jetstream.JetStream
	intake *ingest.Intake
	srv    *httptest.Server
}

func newFixture(t *testing.T, filter Filter) *fixture {
	t.Helper()
	js := embeddedtest.JetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := ingest.Open(ctx, js, ingest.Config{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(secret, in, filter, zaptest.NewLogger(t))
	mux := http.NewServeMux()
	mux.Handle("POST /api/v1/github/webhook", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &fixture{js: js, intake: in, srv: srv}
}

type delivery struct {
	event, id, signature string
	body                 []byte
}

func (f *fixture) post(t *testing.T, d delivery) (int, response) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/api/v1/github/webhook", strings.NewReader(string(d.body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", d.event)
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("User-Agent", "GitHub-Hookshot/test")
	if d.signature != "" {
		req.Header.Set("X-Hub-Signature-256", d.signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("answer is not JSON: %v", err)
	}
	return resp.StatusCode, r
}

// signed is a delivery signed with the secret.
func signed(event, id string, body []byte) delivery {
	return delivery{event: event, id: id, body: body, signature: sign(body, secret)}
}

// stored is how many deliveries the intake's stream holds.
func (f *fixture) stored(t *testing.T) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := f.js.Stream(ctx, "REDFIX_REPORTS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// failedRun is the published completed workflow_run example, concluded
// with a failure (GitHub's examples hold no failed run).
func failedRun(t *testing.T, ex map[string][]json.RawMessage) json.RawMessage {
	return edit(t, example(t, ex, "workflow_run", "completed"), func(m map[string]any) {
		run := obj(m, "workflow_run")
		run["status"], run["conclusion"] = "completed", "failure"
		run["event"], run["head_branch"] = "push", obj(m, "repository")["default_branch"]
	})
}

func TestSignatures(t *testing.T) {
	ex := examples(t)
	f := newFixture(t, Filter{})
	body := failedRun(t, ex)
	for name, d := range map[string]delivery{
		"missing":         {event: "workflow_run", id: "d-1", body: body},
		"wrong secret":    {event: "workflow_run", id: "d-2", body: body, signature: sign(body, "guess")},
		"not hex":         {event: "workflow_run", id: "d-3", body: body, signature: "sha256=zz"},
		"body changed":    {event: "workflow_run", id: "d-4", body: append([]byte(" "), body...), signature: sign(body, secret)},
		"sha1 only":       {event: "workflow_run", id: "d-5", body: body, signature: "sha1=" + strings.Repeat("0", 40)},
		"ping, no secret": {event: "ping", id: "d-6", body: example(t, ex, "ping", "")},
	} {
		t.Run(name, func(t *testing.T) {
			code, r := f.post(t, d)
			if code != http.StatusUnauthorized || r.Result != "unauthorized" {
				t.Errorf("got %d %+v, want 401", code, r)
			}
		})
	}
	if n := f.stored(t); n != 0 {
		t.Errorf("%d deliveries stored after refusals", n)
	}
}

func TestNoSecretConfigured(t *testing.T) {
	ex := examples(t)
	f := newFixture(t, Filter{})
	h := NewHandler("", f.intake, Filter{}, zaptest.NewLogger(t))
	body := failedRun(t, ex)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/github/webhook", strings.NewReader(string(body)))
	req.Header.Set("X-GitHub-Event", "workflow_run")
	req.Header.Set("X-GitHub-Delivery", "d-1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hub-Signature-256", sign(body, ""))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("with no secret configured: %d, want 503", w.Code)
	}
	if n := f.stored(t); n != 0 {
		t.Errorf("%d deliveries stored", n)
	}
}

func TestPublishedExamples(t *testing.T) {
	ex := examples(t)
	f := newFixture(t, Filter{})
	// Every published ping answers 200 and stores nothing.
	for i, p := range ex["ping"] {
		if code, r := f.post(t, signed("ping", "ping-"+string(rune('a'+i)), p)); code != http.StatusOK || r.Result != "pong" {
			t.Errorf("ping example %d: %d %+v", i, code, r)
		}
	}
	// Events redfix does not act on: 202, dropped.
	for _, event := range []string{"issues", "push", "star", "workflow_job"} {
		if code, r := f.post(t, signed(event, "other-"+event, example(t, ex, event, ""))); code != http.StatusAccepted || r.Result != "ignored" {
			t.Errorf("%s: %d %+v, want 202 ignored", event, code, r)
		}
	}
	// Every published workflow_run is a run that did not fail, or did not
	// complete: ignored.
	for i, p := range ex["workflow_run"] {
		if code, r := f.post(t, signed("workflow_run", "run-"+string(rune('a'+i)), p)); code != http.StatusAccepted || r.Result != "ignored" {
			t.Errorf("workflow_run example %d: %d %+v, want 202 ignored", i, code, r)
		}
	}
	// The published pull_request closed and review examples are about
	// someone else's branch: ignored.
	for _, ev := range []struct{ event, action string }{{"pull_request", "closed"}, {"pull_request_review", "submitted"}} {
		code, r := f.post(t, signed(ev.event, "other-"+ev.event, example(t, ex, ev.event, ev.action)))
		if code != http.StatusAccepted || r.Result != "ignored" || !strings.Contains(r.Reason, "not redfix's") {
			t.Errorf("%s %s: %d %+v", ev.event, ev.action, code, r)
		}
	}
	if n := f.stored(t); n != 0 {
		t.Fatalf("%d deliveries stored, want none", n)
	}

	// The same payloads on redfix's branch are stored.
	onOurBranch := func(m map[string]any) { obj(obj(m, "pull_request"), "head")["ref"] = "redfix/0123abcd" }
	for _, ev := range []struct{ event, action string }{{"pull_request", "closed"}, {"pull_request_review", "submitted"}} {
		code, r := f.post(t, signed(ev.event, "ours-"+ev.event, edit(t, example(t, ex, ev.event, ev.action), onOurBranch)))
		if code != http.StatusAccepted || r.Result != "accepted" {
			t.Errorf("%s %s on redfix's branch: %d %+v", ev.event, ev.action, code, r)
		}
	}
	// A failed run on the default branch is stored, once per delivery id.
	run := signed("workflow_run", "72d3162e-cc78-11e3-81ab-4c9367dc0958", failedRun(t, ex))
	if code, r := f.post(t, run); code != http.StatusAccepted || r.Result != "accepted" {
		t.Errorf("failed run: %d %+v", code, r)
	}
	if code, r := f.post(t, run); code != http.StatusAccepted || r.Result != "duplicate" || !r.Duplicate {
		t.Errorf("redelivered failed run: %d %+v", code, r)
	}
	if n := f.stored(t); n != 3 {
		t.Errorf("%d deliveries stored, want 3", n)
	}
}

func TestRunFilter(t *testing.T) {
	ex := examples(t)
	f := newFixture(t, Filter{Allow: []string{"codertocat/*"}, Repositories: []Repository{{Name: "Codertocat/Hello-World", Branches: []string{"main", "release-*"}}}})
	cases := []struct {
		name   string
		set    func(run, m map[string]any)
		result string
		reason string
	}{
		{"pull request event", func(run, m map[string]any) { run["event"], run["head_branch"] = "pull_request", "main" }, "ignored", "pull-request branch"},
		{"pull request branch", func(run, m map[string]any) {
			run["head_branch"] = "feature"
			obj(m, "repository")["default_branch"] = "feature"
			run["pull_requests"] = []any{map[string]any{"id": 1, "number": 7, "url": "https://api.github.com/repos/octo-org/octo-repo/pulls/7",
				"head": map[string]any{"ref": "feature", "sha": "a", "repo": map[string]any{"id": 1, "url": "u", "name": "octo-repo"}},
				"base": map[string]any{"ref": "main", "sha": "b", "repo": map[string]any{"id": 1, "url": "u", "name": "octo-repo"}}}}
		}, "ignored", "pull-request branch"},
		{"branch not configured", func(run, m map[string]any) { run["head_branch"] = "master" }, "ignored", "is not one of main, release-*"},
		{"configured branch", func(run, m map[string]any) { run["head_branch"] = "main" }, "accepted", ""},
		{"configured glob", func(run, m map[string]any) { run["head_branch"] = "release-1.2" }, "accepted", ""},
		{"cancelled", func(run, m map[string]any) { run["head_branch"], run["conclusion"] = "main", "cancelled" }, "ignored", "not failure"},
		{"not allowed", func(run, m map[string]any) {
			run["head_branch"] = "main"
			obj(m, "repository")["full_name"] = "someone/else"
		}, "ignored", "not in the allowlist"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := edit(t, failedRun(t, ex), func(m map[string]any) { tc.set(obj(m, "workflow_run"), m) })
			code, r := f.post(t, signed("workflow_run", "filter-"+string(rune('a'+i)), body))
			if code != http.StatusAccepted || r.Result != tc.result || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("got %d %+v, want %s", code, r, tc.result)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	ex := examples(t)
	f := newFixture(t, Filter{})
	for name, d := range map[string]delivery{
		"not JSON":         signed("workflow_run", "m-1", []byte("{not json")),
		"no repository":    signed("workflow_run", "m-2", edit(t, failedRun(t, ex), func(m map[string]any) { delete(m, "repository") })),
		"no run":           signed("workflow_run", "m-3", edit(t, failedRun(t, ex), func(m map[string]any) { delete(m, "workflow_run") })),
		"no delivery id":   signed("workflow_run", "", failedRun(t, ex)),
		"wrong field type": signed("pull_request", "m-4", edit(t, example(t, ex, "pull_request", "closed"), func(m map[string]any) { m["number"] = "two" })),
	} {
		t.Run(name, func(t *testing.T) {
			if code, r := f.post(t, d); code != http.StatusBadRequest || r.Result != "malformed" {
				t.Errorf("got %d %+v, want 400 malformed", code, r)
			}
		})
	}
	if n := f.stored(t); n != 0 {
		t.Errorf("%d malformed deliveries stored", n)
	}
}

// TestDefaultBranch: with no branches configured only the repository's
// default branch counts.
func TestDefaultBranch(t *testing.T) {
	ex := examples(t)
	f := newFixture(t, Filter{})
	for i, tc := range []struct{ branch, result string }{{"main", "accepted"}, {"feature", "ignored"}} {
		body := edit(t, failedRun(t, ex), func(m map[string]any) { obj(m, "workflow_run")["head_branch"] = tc.branch })
		if code, r := f.post(t, signed("workflow_run", "default-"+string(rune('a'+i)), body)); code != http.StatusAccepted || r.Result != tc.result {
			t.Errorf("run on %s: %d %+v, want %s", tc.branch, code, r, tc.result)
		}
	}
}
