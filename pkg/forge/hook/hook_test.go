package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/ingest"
)

// memIntake stores submissions by id; fail makes every Submit fail.
type memIntake struct {
	got  map[string]ingest.Submission
	fail bool
}

func (m *memIntake) Submit(_ context.Context, s ingest.Submission) (bool, error) {
	if m.fail {
		return false, errors.New("stream unavailable")
	}
	_, dup := m.got[s.ID]
	m.got[s.ID] = s
	return dup, nil
}

// endpoint serves Accept behind ReadBody with a 64-byte cap; events are
// "push" (stored under repo "o/r" unless the payload says "skip") and
// "hello" (answered "hi").
func endpoint(t *testing.T, in *memIntake) http.Handler {
	e := Endpoint{Intake: in, Kind: "test", Required: "X-Event and X-Id", Resend: "send it again",
		Known: func(ev string) bool { return ev == "push" || ev == "hello" },
		Decode: func(ev string, payload []byte) (Decoded, error) {
			var p struct{ Skip string }
			if err := json.Unmarshal(payload, &p); err != nil {
				return Decoded{}, err
			}
			if ev == "hello" {
				return Decoded{Reply: "hi"}, nil
			}
			return Decoded{Repo: "o/r", Skip: p.Skip}, nil
		}}
	log := zaptest.NewLogger(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := ReadBody(w, r, log, 64)
		if !ok {
			return
		}
		e.Accept(r.Context(), w, log, Delivery{Event: r.Header.Get("X-Event"), ID: r.Header.Get("X-Id"), Payload: body})
	})
}

func TestAccept(t *testing.T) {
	in := &memIntake{got: map[string]ingest.Submission{}}
	h := endpoint(t, in)
	for _, c := range []struct {
		name, event, id, body string
		code                  int
		result, reason        string
	}{
		{"stored", "push", "d1", `{}`, 202, "accepted", ""},
		{"sent again", "push", "d1", `{}`, 202, "duplicate", ""},
		{"no id", "push", "", `{}`, 400, "malformed", "X-Event and X-Id are required"},
		{"not acted on", "star", "d2", `{}`, 202, "ignored", "event star is not one redfix acts on"},
		{"does not decode", "push", "d3", `{`, 400, "malformed", "unexpected end of JSON input"},
		{"filtered", "push", "d4", `{"Skip": "a fork"}`, 202, "ignored", "a fork"},
		{"a handshake", "hello", "d5", `{}`, 200, "hi", ""},
		{"over the cap", "push", "d6", `{"x": "` + strings.Repeat("a", 100) + `"}`, 413, "malformed", "the body could not be read"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewBufferString(c.body))
		req.Header.Set("X-Event", c.event)
		req.Header.Set("X-Id", c.id)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var r Response
		if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
			t.Fatalf("%s: the answer is not JSON: %q", c.name, w.Body.String())
		}
		if w.Code != c.code || r.Result != c.result || r.Reason != c.reason || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %+v, want %d %s %q", c.name, w.Code, r, c.code, c.result, c.reason)
		}
	}
	if len(in.got) != 1 || in.got["d1"].Repo != "o/r" || in.got["d1"].Kind != "test" || in.got["d1"].Event != "push" {
		t.Errorf("stored %+v, want d1 alone, under o/r", in.got)
	}
}

// TestAcceptUnstored: a delivery the intake cannot store is answered 503,
// so that the forge (or the resync) sends it again; nothing is claimed.
func TestAcceptUnstored(t *testing.T) {
	h := endpoint(t, &memIntake{got: map[string]ingest.Submission{}, fail: true})
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(`{}`))
	req.Header.Set("X-Event", "push")
	req.Header.Set("X-Id", "d1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"result":"unavailable"`) || !strings.Contains(w.Body.String(), "send it again") {
		t.Errorf("%d %s", w.Code, w.Body.String())
	}
}
