// Package webhook is GitHub's way in: the endpoint that receives its
// webhooks, before the reports stream. It verifies a delivery's signature,
// decodes and filters it (pkg/forge/github/event), writes it to the report intake's
// JetStream stream (message id = the delivery's id, so a redelivered
// delivery is stored once) and only then answers GitHub with a 2xx. It
// acts on nothing: what a stored delivery becomes, a test report for
// triage or a fix's outcome, is decided when triage consumes the stream
// (pkg/forge/github/deliveries).
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/ingest"
)

// Intake stores a delivery durably.
type Intake interface {
	Submit(ctx context.Context, s ingest.Submission) (duplicate bool, err error)
}

// MaxPayloadBytes is GitHub's cap on a webhook payload.
const MaxPayloadBytes = 25 << 20

// Handler is the webhook endpoint.
type Handler struct {
	secret []byte
	intake Intake
	filter event.Filter
	log    *zap.Logger
	// Count, when set, is told of each delivery's result: accepted,
	// duplicate, ignored, unauthorized, malformed, unavailable, ping.
	Count func(result string)
}

// NewHandler makes the endpoint. With an empty secret every delivery is
// refused: an unsigned webhook is never trusted.
func NewHandler(secret string, intake Intake, filter event.Filter, log *zap.Logger) *Handler {
	return &Handler{secret: []byte(secret), intake: intake, filter: filter, log: log}
}

type response struct {
	Delivery  string `json:"delivery,omitempty"`
	Event     string `json:"event,omitempty"`
	Result    string `json:"result"`
	Reason    string `json:"reason,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

func (h *Handler) answer(w http.ResponseWriter, code int, r response) {
	if h.Count != nil {
		h.Count(r.Result)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(r)
}

// ServeHTTP verifies, filters and stores one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := gogithub.WebHookType(r)
	delivery := gogithub.DeliveryID(r)
	log := h.log.With(zap.String("delivery", delivery), zap.String("event", name), zap.String("remote", r.RemoteAddr))
	if len(h.secret) == 0 {
		log.Error("webhook refused: no webhook secret is configured")
		h.answer(w, http.StatusServiceUnavailable, response{Result: "unavailable", Reason: "no webhook secret is configured"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPayloadBytes))
	if err != nil {
		log.Warn("webhook refused: reading the body", zap.Error(err))
		code := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			code = http.StatusRequestEntityTooLarge
		}
		h.answer(w, code, response{Result: "malformed", Reason: "the body could not be read"})
		return
	}
	// Only the SHA-256 signature is trusted; the legacy SHA-1 one is not.
	sig := r.Header.Get(gogithub.SHA256SignatureHeader)
	if sig == "" {
		log.Warn("webhook refused: no " + gogithub.SHA256SignatureHeader + " header")
		h.answer(w, http.StatusUnauthorized, response{Result: "unauthorized", Reason: "missing signature"})
		return
	}
	// ValidateSignature compares the HMACs in constant time.
	if err := gogithub.ValidateSignature(sig, body, h.secret); err != nil {
		log.Warn("webhook refused: bad signature", zap.Error(err))
		h.answer(w, http.StatusUnauthorized, response{Result: "unauthorized", Reason: "bad signature"})
		return
	}
	payload, err := payloadOf(r.Header.Get("Content-Type"), body)
	if err != nil {
		log.Warn("webhook refused: malformed", zap.Error(err))
		h.answer(w, http.StatusBadRequest, response{Result: "malformed", Reason: err.Error()})
		return
	}
	if name == "" || delivery == "" {
		log.Warn("webhook refused: no event name or delivery id")
		h.answer(w, http.StatusBadRequest, response{Result: "malformed", Reason: "X-GitHub-Event and X-GitHub-Delivery are required"})
		return
	}
	resp := response{Delivery: delivery, Event: name}
	if !event.Known(name) {
		resp.Result, resp.Reason = "ignored", "event "+name+" is not one redfix acts on"
		log.Info("webhook ignored: event not acted on")
		h.answer(w, http.StatusAccepted, resp)
		return
	}
	if name == event.Ping {
		var ping gogithub.PingEvent
		if err := json.Unmarshal(payload, &ping); err != nil {
			log.Warn("webhook refused: ping payload does not parse", zap.Error(err))
			resp.Result, resp.Reason = "malformed", "ping payload does not parse: "+err.Error()
			h.answer(w, http.StatusBadRequest, resp)
			return
		}
		log.Info("webhook ping", zap.String("zen", ping.GetZen()), zap.Int64("hook", ping.GetHookID()))
		resp.Result = "pong"
		h.answer(w, http.StatusOK, resp)
		return
	}
	d, err := event.Decode(name, payload)
	if err != nil {
		log.Warn("webhook refused: malformed", zap.Error(err))
		resp.Result, resp.Reason = "malformed", err.Error()
		h.answer(w, http.StatusBadRequest, resp)
		return
	}
	if skip := d.Skip(h.filter); skip != "" {
		log.Info("webhook ignored", zap.String("repo", d.Repo), zap.String("reason", skip))
		resp.Result, resp.Reason = "ignored", skip
		h.answer(w, http.StatusAccepted, resp)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	dup, err := h.intake.Submit(ctx, ingest.Submission{ID: delivery, Kind: event.Kind, Event: name, Repo: d.Repo, Payload: payload})
	if err != nil {
		// GitHub does not retry by itself; the resync asks it to redeliver.
		log.Error("webhook not stored", zap.String("repo", d.Repo), zap.Error(err))
		resp.Result, resp.Reason = "unavailable", "the delivery could not be stored; redeliver it"
		h.answer(w, http.StatusServiceUnavailable, resp)
		return
	}
	resp.Result, resp.Duplicate = "accepted", dup
	if dup {
		resp.Result = "duplicate"
	}
	log.Info("webhook stored", zap.String("repo", d.Repo), zap.Bool("duplicate", dup))
	h.answer(w, http.StatusAccepted, resp)
}

// payloadOf is the JSON payload of a signed body: the body itself, or its
// "payload" form field for webhooks configured with the form content type.
func payloadOf(contentType string, body []byte) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("content type %q: %w", contentType, err)
	}
	// The signature was checked on the body already; an empty secret here
	// only extracts the payload.
	return gogithub.ValidatePayloadFromBody(mt, bytes.NewReader(body), "", nil)
}
