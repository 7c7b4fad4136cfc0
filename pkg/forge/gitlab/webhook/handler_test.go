package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/forge/gitlab/gltest"
	"github.com/redfix/redfix/pkg/forge/gitlab/webhook"
	"github.com/redfix/redfix/pkg/ingest"
)

// intake keeps what it was given, once per id.
type intake struct {
	mu   sync.Mutex
	subs []ingest.Submission
	fail bool
}

func (i *intake) Submit(_ context.Context, s ingest.Submission) (bool, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.fail {
		return false, errors.New("JetStream is down")
	}
	for _, x := range i.subs {
		if x.ID == s.ID {
			return true, nil
		}
	}
	i.subs = append(i.subs, s)
	return false, nil
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "gltest", "testdata", "hooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestWebhook: a delivery carrying the secret is stored before it is
// answered, under its Idempotency-Key (the same delivery again is stored
// once); a wrong, partial or missing token is 401 and nothing is stored;
// no secret configured refuses everything; events redfix does not act on
// and filtered ones are answered without being stored; a payload that does
// not decode is 400; a stream that cannot store is 503.
func TestWebhook(t *testing.T) {
	const secret = "whsec-gitlab-0123456789"
	srv := gltest.New(t)
	in := &intake{}
	h := webhook.NewHandler(secret, "https://gitlab.example.com", in, event.Filter{}, zap.NewNop())
	bot := httptest.NewServer(h)
	defer bot.Close()
	pipeline := gltest.Delivery{Event: gltest.PipelineHook, Payload: fixture(t, "pipeline.json"), UUID: "3f0c9a52-1111-4a4a-8c8c-000000000001"}
	for _, c := range []struct {
		name, secret string
		d            gltest.Delivery
		code         int
		result       string
		stored       int
	}{
		{"stored", secret, pipeline, 202, `"accepted"`, 1},
		{"again", secret, pipeline, 202, `"duplicate"`, 1},
		{"wrong secret", "whsec-wrong", gltest.Delivery{Event: gltest.PipelineHook, Payload: fixture(t, "pipeline.json"), UUID: "u2"}, 401, "unauthorized", 1},
		{"a prefix of the secret", secret[:10], gltest.Delivery{Event: gltest.PipelineHook, Payload: fixture(t, "pipeline.json"), UUID: "u3"}, 401, "unauthorized", 1},
		{"no token", "", gltest.Delivery{Event: gltest.PipelineHook, Payload: fixture(t, "pipeline.json"), UUID: "u4"}, 401, "unauthorized", 1},
		{"push", secret, gltest.Delivery{Event: "Push Hook", Payload: []byte(`{"object_kind":"push"}`), UUID: "u5"}, 202, "ignored", 1},
		{"a person's note", secret, gltest.Delivery{Event: gltest.NoteHook, Payload: []byte(strings.Replace(string(fixture(t, "note.json")), "/redfix explain", "LGTM", 1)), UUID: "u6"}, 202, "not a /redfix command", 1},
		{"malformed", secret, gltest.Delivery{Event: gltest.MergeRequestHook, Payload: []byte(`{"object_kind":`), UUID: "u7"}, 400, "malformed", 1},
		{"merge", secret, gltest.Delivery{Event: gltest.MergeRequestHook, Payload: fixture(t, "merge_request.json"), UUID: "u8"}, 202, `"accepted"`, 2},
		{"note", secret, gltest.Delivery{Event: gltest.NoteHook, Payload: fixture(t, "note.json"), UUID: "u9"}, 202, `"accepted"`, 3},
	} {
		code, body, err := srv.Deliver(bot.URL, c.secret, c.d)
		if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(body, c.result) || len(in.subs) != c.stored {
			t.Errorf("%s: %d %s, %d stored; want %d %s, %d stored", c.name, code, body, len(in.subs), c.code, c.result, c.stored)
		}
	}
	first := in.subs[0]
	if first.ID != pipeline.UUID || first.Kind != event.Kind || first.Event != event.Pipeline || first.Repo != "https://gitlab.example.com/acme/payments/ledger" || string(first.Payload) != string(pipeline.Payload) {
		t.Errorf("stored %+v", first)
	}

	// Without Idempotency-Key, the event's UUID names the delivery.
	req, _ := http.NewRequest(http.MethodPost, bot.URL, strings.NewReader(string(fixture(t, "merge_request.json"))))
	req.Header.Set("X-Gitlab-Event", gltest.MergeRequestHook)
	req.Header.Set("X-Gitlab-Event-UUID", "only-the-uuid")
	req.Header.Set("X-Gitlab-Token", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 || in.subs[len(in.subs)-1].ID != "only-the-uuid" {
		t.Errorf("a delivery without Idempotency-Key: %d, stored as %q", resp.StatusCode, in.subs[len(in.subs)-1].ID)
	}

	in.fail = true
	if code, _, _ := srv.Deliver(bot.URL, secret, gltest.Delivery{Event: gltest.PipelineHook, Payload: fixture(t, "pipeline.json"), UUID: "u10"}); code != http.StatusServiceUnavailable {
		t.Errorf("a stream that cannot store: %d, want 503", code)
	}
	open := httptest.NewServer(webhook.NewHandler("", "https://gitlab.example.com", &intake{}, event.Filter{}, zap.NewNop()))
	defer open.Close()
	if code, _, _ := srv.Deliver(open.URL, "", pipeline); code != http.StatusServiceUnavailable {
		t.Errorf("no secret configured: %d, want 503", code)
	}
}
