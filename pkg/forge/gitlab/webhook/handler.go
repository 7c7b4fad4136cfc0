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
	"crypto/subtle"
	"net/http"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/forge/gitlab/event"
	"github.com/redfix/redfix/pkg/forge/hook"
)

// Intake stores a delivery durably.
type Intake = hook.Intake

// MaxPayloadBytes caps a webhook's body (GitLab's own cap is 25 MB).
const MaxPayloadBytes = 25 << 20

// Handler is the webhook endpoint.
type Handler struct {
	secret []byte
	filter event.Filter
	// web is the instance's address, which a stored delivery names its
	// project under.
	web string
	log *zap.Logger
	ep  hook.Endpoint
}

// NewHandler makes the endpoint for the instance at web. With an empty
// secret every delivery is refused: a webhook without a secret is never
// trusted.
func NewHandler(secret, web string, intake Intake, filter event.Filter, log *zap.Logger) *Handler {
	h := &Handler{secret: []byte(secret), web: web, filter: filter, log: log}
	h.ep = hook.Endpoint{Intake: intake, Kind: event.Kind, Known: event.Known, Decode: h.decode,
		Required: "X-Gitlab-Event and Idempotency-Key or X-Gitlab-Event-UUID",
		// GitLab does not send a failed delivery again by itself; the
		// resync looks for the pipelines it missed.
		Resend: "send it again"}
	return h
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

// ServeHTTP checks a delivery's token, then filters and stores it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, delivery := r.Header.Get("X-Gitlab-Event"), DeliveryID(r)
	log := h.log.With(zap.String("delivery", delivery), zap.String("event", name), zap.String("remote", r.RemoteAddr))
	if len(h.secret) == 0 {
		hook.Refuse(w, log, http.StatusServiceUnavailable, "no webhook secret is configured", "no GitLab webhook secret is configured (REDFIX_GITLAB_WEBHOOK_SECRET)")
		return
	}
	if !h.authorized(r) {
		hook.Refuse(w, log, http.StatusUnauthorized, "missing or wrong X-Gitlab-Token", "X-Gitlab-Token missing or wrong")
		return
	}
	payload, ok := hook.ReadBody(w, r, log, MaxPayloadBytes)
	if !ok {
		return
	}
	h.ep.Accept(r.Context(), w, log, hook.Delivery{Event: name, ID: delivery, Payload: payload})
}

// decode reads and filters a delivery; it is stored under the instance's
// address and the project's path.
func (h *Handler) decode(name string, payload []byte) (hook.Decoded, error) {
	d, err := event.Decode(name, payload)
	if err != nil {
		return hook.Decoded{}, err
	}
	return hook.Decoded{Repo: h.web + "/" + d.Project, Skip: d.Skip(h.filter)}, nil
}
