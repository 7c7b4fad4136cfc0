// Package webhook is GitLab's way in: the endpoint that receives its
// webhooks (POST /api/v1/gitlab/webhook), before the reports stream. It
// checks the delivery's X-Gitlab-Token against the configured secret in
// constant time, decodes and filters it (pkg/forge/gitlab/event), writes it
// to the report intake's JetStream stream (message id = the delivery's
// Idempotency-Key, else its X-Gitlab-Event-UUID, so that a delivery sent
// again is stored once) and only then answers GitLab. It acts on nothing:
// what a stored delivery becomes is decided when triage consumes the
// stream (pkg/forge/gitlab/deliveries).
package webhook

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/ingest"
)

// Intake stores a delivery durably.
type Intake interface {
	Submit(ctx context.Context, s ingest.Submission) (duplicate bool, err error)
}

// MaxPayloadBytes caps a webhook's body (GitLab's own cap is 25 MB).
const MaxPayloadBytes = 25 << 20

// Handler is the webhook endpoint.
type Handler struct {
	secret []byte
	intake Intake
	filter event.Filter
	// web is the instance's address, which a stored delivery names its
	// project under.
	web string
	log *zap.Logger
	// Count, when set, is told of each delivery's result: accepted,
	// duplicate, ignored, unauthorized, malformed, unavailable.
	Count func(result string)
}

// NewHandler makes the endpoint for the instance at web. With an empty
// secret every delivery is refused: a webhook without a secret is never
// trusted.
func NewHandler(secret, web string, intake Intake, filter event.Filter, log *zap.Logger) *Handler {
	return &Handler{secret: []byte(secret), web: web, intake: intake, filter: filter, log: log}
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

// DeliveryID is a delivery's identity: its Idempotency-Key (the same for
// every attempt GitLab makes), else its X-Gitlab-Event-UUID.
func DeliveryID(r *http.Request) string {
	if id := r.Header.Get("Idempotency-Key"); id != "" {
		return id
	}
	return r.Header.Get("X-Gitlab-Event-UUID")
}

// authorized compares the delivery's token with the secret in constant
// time.
func (h *Handler) authorized(r *http.Request) bool {
	got := []byte(r.Header.Get("X-Gitlab-Token"))
	return len(got) > 0 && subtle.ConstantTimeCompare(got, h.secret) == 1
}

// ServeHTTP checks, filters and stores one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, delivery := r.Header.Get("X-Gitlab-Event"), DeliveryID(r)
	log := h.log.With(zap.String("delivery", delivery), zap.String("event", name), zap.String("remote", r.RemoteAddr))
	if len(h.secret) == 0 {
		log.Error("webhook refused: no GitLab webhook secret is configured (REDFIX_GITLAB_WEBHOOK_SECRET)")
		h.answer(w, http.StatusServiceUnavailable, response{Result: "unavailable", Reason: "no webhook secret is configured"})
		return
	}
	if !h.authorized(r) {
		log.Warn("webhook refused: X-Gitlab-Token missing or wrong")
		h.answer(w, http.StatusUnauthorized, response{Result: "unauthorized", Reason: "missing or wrong X-Gitlab-Token"})
		return
	}
	payload, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPayloadBytes))
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
	if name == "" || delivery == "" {
		log.Warn("webhook refused: no event name or delivery id")
		h.answer(w, http.StatusBadRequest, response{Result: "malformed", Reason: "X-Gitlab-Event and Idempotency-Key or X-Gitlab-Event-UUID are required"})
		return
	}
	resp := response{Delivery: delivery, Event: name}
	if !event.Known(name) {
		resp.Result, resp.Reason = "ignored", "event "+name+" is not one redfix acts on"
		log.Info("webhook ignored: event not acted on")
		h.answer(w, http.StatusAccepted, resp)
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
		log.Info("webhook ignored", zap.String("project", d.Project), zap.String("reason", skip))
		resp.Result, resp.Reason = "ignored", skip
		h.answer(w, http.StatusAccepted, resp)
		return
	}
	h.store(r.Context(), w, log, d, ingest.Submission{ID: delivery, Kind: event.Kind, Event: name, Repo: h.web + "/" + d.Project, Payload: payload}, resp)
}

// store makes the delivery durable, then answers.
func (h *Handler) store(ctx context.Context, w http.ResponseWriter, log *zap.Logger, d event.Delivery, sub ingest.Submission, resp response) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dup, err := h.intake.Submit(ctx, sub)
	if err != nil {
		// GitLab does not send a failed delivery again by itself; the
		// resync looks for the pipelines it missed.
		log.Error("webhook not stored", zap.String("project", d.Project), zap.Error(err))
		resp.Result, resp.Reason = "unavailable", "the delivery could not be stored; send it again"
		h.answer(w, http.StatusServiceUnavailable, resp)
		return
	}
	resp.Result, resp.Duplicate = "accepted", dup
	if dup {
		resp.Result = "duplicate"
	}
	log.Info("webhook stored", zap.String("project", d.Project), zap.Bool("duplicate", dup))
	h.answer(w, http.StatusAccepted, resp)
}
