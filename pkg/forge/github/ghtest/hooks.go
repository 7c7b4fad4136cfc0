package ghtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"
)

// WebhookExample is the first of GitHub's published example payloads
// (@octokit/webhooks-examples) of event whose action is action ("" for
// any), decoded so that a test can put its own run or pull request in.
func WebhookExample(t testing.TB, event, action string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(WebhookExamples(t))
	if err != nil {
		t.Fatal(err)
	}
	var all []struct {
		Name     string           `json:"name"`
		Examples []map[string]any `json:"examples"`
	}
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatalf("webhook examples: %v", err)
	}
	for _, e := range all {
		if e.Name != event {
			continue
		}
		for _, ex := range e.Examples {
			if a, _ := ex["action"].(string); action == "" || a == action {
				return ex
			}
		}
	}
	t.Fatalf("no published %s example with action %q", event, action)
	return nil
}

// WebhookPayloads are GitHub's published example payloads
// (@octokit/webhooks-examples), by event name, as the bytes GitHub would
// send.
func WebhookPayloads(t testing.TB) map[string][]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(WebhookExamples(t))
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

// WebhookPayload is the first of payloads (WebhookPayloads) of event whose
// action is action ("" for any).
func WebhookPayload(t testing.TB, payloads map[string][]json.RawMessage, event, action string) json.RawMessage {
	t.Helper()
	for _, p := range payloads[event] {
		var a struct{ Action string }
		if json.Unmarshal(p, &a) == nil && (action == "" || a.Action == action) {
			return p
		}
	}
	t.Fatalf("no published %s example with action %q", event, action)
	return nil
}

// EditPayload changes a payload: set is called on its decoded form.
func EditPayload(t testing.TB, p json.RawMessage, set func(m map[string]any)) json.RawMessage {
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

// Object is the JSON object m holds at key, for EditPayload's set.
func Object(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

// SignPayload is the X-Hub-Signature-256 of body under secret.
func SignPayload(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Deliver posts payload to url as GitHub delivers a webhook: JSON, signed
// with secret, with the event's name and the delivery's id. It returns the
// answer's status and body.
func Deliver(t testing.TB, url, secret, event, delivery string, payload any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/ghtest")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", SignPayload(secret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// RepoJSON is owner/name as the API and webhooks carry it. It takes the
// lock.
func (s *Server) RepoJSON(owner, name string) map[string]any {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.Repo(owner, name)
	if !ok {
		s.t.Fatalf("ghtest: no repository %s/%s", owner, name)
	}
	ex, err := s.Desc.Example("GET", "/repos/{owner}/{repo}", 200)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.repoJSON(ex, r)
}
