// Package hook is what every forge's webhook endpoint does with a delivery
// once the forge's own handler has authenticated it and named it: read its
// body within a cap, refuse what is malformed with a 4xx and a log line,
// let the forge's rules ignore or decode it, store it in the report intake
// (message id = the delivery's id, so a delivery sent again is stored once)
// and only then answer, always with one JSON shape. A forge's package
// (pkg/forge/github/webhook, pkg/forge/gitlab/webhook) keeps what is its
// own: how a delivery is signed, which headers name it, which events it
// acts on and how they decode.
package hook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/ingest"
)

// Intake stores a delivery durably.
type Intake interface {
	Submit(ctx context.Context, s ingest.Submission) (duplicate bool, err error)
}

// Response is every answer's body. Result is one of accepted, duplicate,
// ignored, unauthorized, malformed, unavailable, or a forge's own reply
// (GitHub's ping: pong).
type Response struct {
	Delivery  string `json:"delivery,omitempty"`
	Event     string `json:"event,omitempty"`
	Result    string `json:"result"`
	Reason    string `json:"reason,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// Answer writes r as the answer, with code.
func Answer(w http.ResponseWriter, code int, r Response) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(r)
}

// Refuse answers a delivery refused before it is read: no secret is
// configured (503), or it is not authenticated (401). It logs why.
func Refuse(w http.ResponseWriter, log *zap.Logger, code int, reason, logged string) {
	result := "unauthorized"
	if code == http.StatusServiceUnavailable {
		result = "unavailable"
		log.Error("webhook refused: " + logged)
	} else {
		log.Warn("webhook refused: " + logged)
	}
	Answer(w, code, Response{Result: result, Reason: reason})
}

// ReadBody reads a delivery's body, max bytes at the most. When it cannot
// it answers (413 for a body over the cap, else 400), logs why, and
// returns false.
func ReadBody(w http.ResponseWriter, r *http.Request, log *zap.Logger, max int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		log.Warn("webhook refused: reading the body", zap.Error(err))
		code := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			code = http.StatusRequestEntityTooLarge
		}
		Answer(w, code, Response{Result: "malformed", Reason: "the body could not be read"})
		return nil, false
	}
	return body, true
}

// Malformed answers 400 for a delivery that does not read, and logs why.
func Malformed(w http.ResponseWriter, log *zap.Logger, resp Response, reason string) {
	log.Warn("webhook refused: malformed", zap.String("reason", reason))
	resp.Result, resp.Reason = "malformed", reason
	Answer(w, http.StatusBadRequest, resp)
}

// Decoded is what a forge's decoder says of a delivery it acts on.
type Decoded struct {
	// Repo is the repository the delivery is stored under.
	Repo string
	// Skip says why the forge's filter ignores the delivery ("" to store
	// it).
	Skip string
	// Reply, when set, is answered at once (200) and nothing is stored:
	// a forge's own handshake (GitHub's ping: "pong").
	Reply string
	// Fields are logged with the reply.
	Fields []zap.Field
}

// Delivery is a delivery authenticated and read, as its forge names it.
type Delivery struct {
	// Event and ID are the delivery's event name and identity, from its
	// forge's headers ("" when missing: the delivery is malformed).
	Event, ID string
	// Payload is its JSON payload.
	Payload []byte
}

// Endpoint is the part of a forge's webhook endpoint that every forge
// shares.
type Endpoint struct {
	Intake Intake
	// Kind is the intake's kind for the forge's deliveries.
	Kind string
	// Known reports an event the forge acts on; others are ignored (202).
	Known func(event string) bool
	// Decode reads a known event's payload.
	Decode func(event string, payload []byte) (Decoded, error)
	// Required names the headers a delivery must have, for the reason a
	// delivery without them is refused.
	Required string
	// Resend is what the forge should do with a delivery that could not
	// be stored ("redeliver it"), for the 503's reason.
	Resend string
}

// Accept checks that d is named, ignores what the forge does not act on,
// decodes it, and stores it; it answers in every case.
func (e Endpoint) Accept(ctx context.Context, w http.ResponseWriter, log *zap.Logger, d Delivery) {
	if d.Event == "" || d.ID == "" {
		log.Warn("webhook refused: no event name or delivery id")
		Answer(w, http.StatusBadRequest, Response{Result: "malformed", Reason: e.Required + " are required"})
		return
	}
	resp := Response{Delivery: d.ID, Event: d.Event}
	if !e.Known(d.Event) {
		resp.Result, resp.Reason = "ignored", "event "+d.Event+" is not one redfix acts on"
		log.Info("webhook ignored: event not acted on")
		Answer(w, http.StatusAccepted, resp)
		return
	}
	dec, err := e.Decode(d.Event, d.Payload)
	if err != nil {
		Malformed(w, log, resp, err.Error())
		return
	}
	if dec.Reply != "" {
		log.Info("webhook "+d.Event, dec.Fields...)
		resp.Result = dec.Reply
		Answer(w, http.StatusOK, resp)
		return
	}
	log = log.With(zap.String("repo", dec.Repo))
	if dec.Skip != "" {
		log.Info("webhook ignored", zap.String("reason", dec.Skip))
		resp.Result, resp.Reason = "ignored", dec.Skip
		Answer(w, http.StatusAccepted, resp)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dup, err := e.Intake.Submit(ctx, ingest.Submission{ID: d.ID, Kind: e.Kind, Event: d.Event, Repo: dec.Repo, Payload: d.Payload})
	if err != nil {
		log.Error("webhook not stored", zap.Error(err))
		resp.Result, resp.Reason = "unavailable", "the delivery could not be stored; "+e.Resend
		Answer(w, http.StatusServiceUnavailable, resp)
		return
	}
	resp.Result, resp.Duplicate = "accepted", dup
	if dup {
		resp.Result = "duplicate"
	}
	log.Info("webhook stored", zap.Bool("duplicate", dup))
	Answer(w, http.StatusAccepted, resp)
}
