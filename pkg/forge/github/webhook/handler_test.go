package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/embedded/embeddedtest"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/ingest"
)

const secret = "It's a Secret to Everybody"

type fixture struct {
	js     jetstream.JetStream
	intake *ingest.Intake
	srv    *httptest.Server
}

func newFixture(t *testing.T, filter event.Filter) *fixture {
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
func signed(name, id string, body []byte) delivery {
	return delivery{event: name, id: id, body: body, signature: ghtest.SignPayload(secret, body)}
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
	return ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "workflow_run", "completed"), func(m map[string]any) {
		run := ghtest.Object(m, "workflow_run")
		run["status"], run["conclusion"] = "completed", "failure"
		run["event"], run["head_branch"] = "push", ghtest.Object(m, "repository")["default_branch"]
	})
}

func TestSignatures(t *testing.T) {
	ex := ghtest.WebhookPayloads(t)
	f := newFixture(t, event.Filter{})
	body := failedRun(t, ex)
	for name, d := range map[string]delivery{
		"missing":         {event: "workflow_run", id: "d-1", body: body},
		"wrong secret":    {event: "workflow_run", id: "d-2", body: body, signature: ghtest.SignPayload("guess", body)},
		"not hex":         {event: "workflow_run", id: "d-3", body: body, signature: "sha256=zz"},
		"body changed":    {event: "workflow_run", id: "d-4", body: append([]byte(" "), body...), signature: ghtest.SignPayload(secret, body)},
		"sha1 only":       {event: "workflow_run", id: "d-5", body: body, signature: "sha1=" + strings.Repeat("0", 40)},
		"ping, no secret": {event: "ping", id: "d-6", body: ghtest.WebhookPayload(t, ex, "ping", "")},
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
	ex := ghtest.WebhookPayloads(t)
	f := newFixture(t, event.Filter{})
	h := NewHandler("", f.intake, event.Filter{}, zaptest.NewLogger(t))
	body := failedRun(t, ex)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/github/webhook", strings.NewReader(string(body)))
	req.Header.Set("X-GitHub-Event", "workflow_run")
	req.Header.Set("X-GitHub-Delivery", "d-1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hub-Signature-256", ghtest.SignPayload("", body))
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
	ex := ghtest.WebhookPayloads(t)
	f := newFixture(t, event.Filter{})
	// Every published ping answers 200 and stores nothing.
	for i, p := range ex["ping"] {
		if code, r := f.post(t, signed("ping", "ping-"+string(rune('a'+i)), p)); code != http.StatusOK || r.Result != "pong" {
			t.Errorf("ping example %d: %d %+v", i, code, r)
		}
	}
	// Events redfix does not act on: 202, dropped.
	for _, name := range []string{"issues", "push", "star", "workflow_job"} {
		if code, r := f.post(t, signed(name, "other-"+name, ghtest.WebhookPayload(t, ex, name, ""))); code != http.StatusAccepted || r.Result != "ignored" {
			t.Errorf("%s: %d %+v, want 202 ignored", name, code, r)
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
		code, r := f.post(t, signed(ev.event, "other-"+ev.event, ghtest.WebhookPayload(t, ex, ev.event, ev.action)))
		if code != http.StatusAccepted || r.Result != "ignored" || !strings.Contains(r.Reason, "not redfix's") {
			t.Errorf("%s %s: %d %+v", ev.event, ev.action, code, r)
		}
	}
	if n := f.stored(t); n != 0 {
		t.Fatalf("%d deliveries stored, want none", n)
	}

	// The same payloads on redfix's branch are stored.
	onOurBranch := func(m map[string]any) {
		ghtest.Object(ghtest.Object(m, "pull_request"), "head")["ref"] = "redfix/0123abcd"
	}
	for _, ev := range []struct{ event, action string }{{"pull_request", "closed"}, {"pull_request_review", "submitted"}} {
		code, r := f.post(t, signed(ev.event, "ours-"+ev.event, ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, ev.event, ev.action), onOurBranch)))
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
	ex := ghtest.WebhookPayloads(t)
	f := newFixture(t, event.Filter{Allow: []string{"codertocat/*"}, Repositories: []event.Repository{{Name: "Codertocat/Hello-World", Branches: []string{"main", "release-*"}}}})
	cases := []struct {
		name   string
		set    func(run, m map[string]any)
		result string
		reason string
	}{
		{"pull request event", func(run, m map[string]any) { run["event"], run["head_branch"] = "pull_request", "main" }, "ignored", "pull-request branch"},
		{"pull request branch", func(run, m map[string]any) {
			run["head_branch"] = "feature"
			ghtest.Object(m, "repository")["default_branch"] = "feature"
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
			ghtest.Object(m, "repository")["full_name"] = "someone/else"
		}, "ignored", "not in the allowlist"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := ghtest.EditPayload(t, failedRun(t, ex), func(m map[string]any) { tc.set(ghtest.Object(m, "workflow_run"), m) })
			code, r := f.post(t, signed("workflow_run", "filter-"+string(rune('a'+i)), body))
			if code != http.StatusAccepted || r.Result != tc.result || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("got %d %+v, want %s", code, r, tc.result)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	ex := ghtest.WebhookPayloads(t)
	f := newFixture(t, event.Filter{})
	for name, d := range map[string]delivery{
		"not JSON":         signed("workflow_run", "m-1", []byte("{not json")),
		"no repository":    signed("workflow_run", "m-2", ghtest.EditPayload(t, failedRun(t, ex), func(m map[string]any) { delete(m, "repository") })),
		"no run":           signed("workflow_run", "m-3", ghtest.EditPayload(t, failedRun(t, ex), func(m map[string]any) { delete(m, "workflow_run") })),
		"no delivery id":   signed("workflow_run", "", failedRun(t, ex)),
		"wrong field type": signed("pull_request", "m-4", ghtest.EditPayload(t, ghtest.WebhookPayload(t, ex, "pull_request", "closed"), func(m map[string]any) { m["number"] = "two" })),
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
	ex := ghtest.WebhookPayloads(t)
	f := newFixture(t, event.Filter{})
	for i, tc := range []struct{ branch, result string }{{"main", "accepted"}, {"feature", "ignored"}} {
		body := ghtest.EditPayload(t, failedRun(t, ex), func(m map[string]any) { ghtest.Object(m, "workflow_run")["head_branch"] = tc.branch })
		if code, r := f.post(t, signed("workflow_run", "default-"+string(rune('a'+i)), body)); code != http.StatusAccepted || r.Result != tc.result {
			t.Errorf("run on %s: %d %+v, want %s", tc.branch, code, r, tc.result)
		}
	}
}
