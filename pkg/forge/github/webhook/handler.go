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
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	gogithub "github.com/google/go-github/v62/github"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/hook"
)

// Intake stores a delivery durably.
type Intake = hook.Intake

// MaxPayloadBytes is GitHub's cap on a webhook payload.
const MaxPayloadBytes = 25 << 20

// Handler is the webhook endpoint.
type Handler struct {
	secret []byte
	filter event.Filter
	log    *zap.Logger
	ep     hook.Endpoint
}

// NewHandler makes the endpoint. With an empty secret every delivery is
// refused: an unsigned webhook is never trusted.
func NewHandler(secret string, intake Intake, filter event.Filter, log *zap.Logger) *Handler {
	h := &Handler{secret: []byte(secret), filter: filter, log: log}
	h.ep = hook.Endpoint{Intake: intake, Kind: event.Kind, Known: event.Known, Decode: h.decode,
		Required: "X-GitHub-Event and X-GitHub-Delivery",
		// GitHub does not retry by itself; the resync asks it to redeliver.
		Resend: "redeliver it"}
	return h
}

type response = hook.Response

// ServeHTTP verifies a delivery's signature, then filters and stores it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := gogithub.WebHookType(r)
	delivery := gogithub.DeliveryID(r)
	log := h.log.With(zap.String("delivery", delivery), zap.String("event", name), zap.String("remote", r.RemoteAddr))
	if len(h.secret) == 0 {
		hook.Refuse(w, log, http.StatusServiceUnavailable, "no webhook secret is configured", "no webhook secret is configured")
		return
	}
	body, ok := hook.ReadBody(w, r, log, MaxPayloadBytes)
	if !ok {
		return
	}
	// Only the SHA-256 signature is trusted; the legacy SHA-1 one is not.
	sig := r.Header.Get(gogithub.SHA256SignatureHeader)
	if sig == "" {
		hook.Refuse(w, log, http.StatusUnauthorized, "missing signature", "no "+gogithub.SHA256SignatureHeader+" header")
		return
	}
	// ValidateSignature compares the HMACs in constant time.
	if err := gogithub.ValidateSignature(sig, body, h.secret); err != nil {
		hook.Refuse(w, log, http.StatusUnauthorized, "bad signature", "bad signature: "+err.Error())
		return
	}
	payload, err := payloadOf(r.Header.Get("Content-Type"), body)
	if err != nil {
		hook.Malformed(w, log, response{}, err.Error())
		return
	}
	h.ep.Accept(r.Context(), w, log, hook.Delivery{Event: name, ID: delivery, Payload: payload})
}

// decode reads a delivery of an event redfix acts on: a ping is answered
// (pong), anything else decoded and filtered.
func (h *Handler) decode(name string, payload []byte) (hook.Decoded, error) {
	if name == event.Ping {
		var ping gogithub.PingEvent
		if err := json.Unmarshal(payload, &ping); err != nil {
			return hook.Decoded{}, fmt.Errorf("ping payload does not parse: %w", err)
		}
		return hook.Decoded{Reply: "pong", Fields: []zap.Field{zap.String("zen", ping.GetZen()), zap.Int64("hook", ping.GetHookID())}}, nil
	}
	d, err := event.Decode(name, payload)
	if err != nil {
		return hook.Decoded{}, err
	}
	return hook.Decoded{Repo: d.Repo, Skip: d.Skip(h.filter)}, nil
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
