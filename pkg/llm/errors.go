package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is an HTTP error answer from a model server.
type APIError struct {
	StatusCode int
	// Message is the server's explanation: the "message" of an OpenAI-style
	// error object, or the start of the body when it had none.
	Message string
	// Type and Code are the OpenAI-style error's fields, when present.
	Type string
	Code string
	// RetryAfter is how long the server asked to wait (Retry-After,
	// retry-after-ms); 0 when it did not say.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Retryable reports whether the same request may succeed later: rate limits,
// timeouts and server errors.
func (e *APIError) Retryable() bool {
	switch {
	case e.StatusCode == http.StatusRequestTimeout,
		e.StatusCode == http.StatusConflict,
		e.StatusCode == http.StatusTooManyRequests,
		e.StatusCode >= 500:
		return true
	}
	return false
}

// ContextLength reports whether the server refused the request because the
// prompt does not fit the model's context window.
func (e *APIError) ContextLength() bool {
	if e.StatusCode != http.StatusBadRequest && e.StatusCode != http.StatusRequestEntityTooLarge && e.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	if e.Code == "context_length_exceeded" {
		return true
	}
	m := strings.ToLower(e.Message)
	for _, s := range []string{"context length", "context window", "prompt is too long", "too many tokens", "maximum context", "exceeds the context", "input is too long"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// IsContextLength reports whether err is a context-length refusal.
func IsContextLength(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.ContextLength()
}

// retryAfter reads how long a server asks to wait: retry-after-ms (OpenAI,
// Anthropic), then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// transientError marks a failure of the transport (connection refused or
// reset, an attempt that timed out) that a later attempt may not meet.
type transientError struct{ err error }

func (e *transientError) Error() string   { return e.err.Error() }
func (e *transientError) Unwrap() error   { return e.err }
func (e *transientError) Retryable() bool { return true }

// IsRetryable reports whether err is worth retrying later: a 408, 409, 429 or
// 5xx answer, or a transport failure. A cancelled context and a 4xx answer
// (bad key, bad request, unknown model) are not.
func IsRetryable(err error) bool {
	var r interface{ Retryable() bool }
	if errors.As(err, &r) {
		return r.Retryable()
	}
	return false
}

// The classes of a failed model call, for counting them: a bounded set.
const (
	ErrorRateLimit     = "rate_limit"     // 429: the server asks to slow down
	ErrorServer        = "server"         // 5xx, 408, 409: the server failed or timed out
	ErrorContextLength = "context_length" // the prompt does not fit the model's window
	ErrorAuth          = "auth"           // 401, 403: the key is missing, wrong or not allowed
	ErrorRequest       = "request"        // another 4xx: a bad request, an unknown model
	ErrorTransport     = "transport"      // no answer: connection refused or reset, attempt timed out
	ErrorOther         = "other"          // anything else (an answer that did not decode, ...)
)

// ErrorClasses lists every class ErrorClass returns.
var ErrorClasses = []string{ErrorRateLimit, ErrorServer, ErrorContextLength, ErrorAuth, ErrorRequest, ErrorTransport, ErrorOther}

// ErrorClass is the class of a failed call's error, as the clients
// classified it where the call was made.
func ErrorClass(err error) string {
	var apiErr *APIError
	var transient *transientError
	switch {
	case asAPIError(err, &apiErr):
		switch {
		case apiErr.ContextLength():
			return ErrorContextLength
		case apiErr.StatusCode == http.StatusTooManyRequests:
			return ErrorRateLimit
		case apiErr.Retryable():
			return ErrorServer
		case apiErr.StatusCode == http.StatusUnauthorized, apiErr.StatusCode == http.StatusForbidden:
			return ErrorAuth
		case apiErr.StatusCode >= 400 && apiErr.StatusCode < 500:
			return ErrorRequest
		}
	case errors.As(err, &transient):
		return ErrorTransport
	}
	return ErrorOther
}

// classifyTransport marks transport errors as transient, unless the caller's
// own context ended them.
func classifyTransport(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) { // the per-attempt timeout
		return &transientError{err: fmt.Errorf("request timed out: %w", err)}
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return &transientError{err: err}
	}
	return err
}

// maxErrorBody caps how much of an error body is kept.
const maxErrorBody = 64 << 10

// errorAnswer keeps the last error answer of a call (status, body and
// headers), seen from an SDK's middleware: the SDKs decode only error bodies
// shaped like their own provider's, and a server's error is reported
// clearly whatever its shape.
type errorAnswer struct {
	status int
	body   []byte
	header http.Header
}

// keep is the middleware: it reads an error answer's body (capped) and
// hands the SDK a copy.
func (e *errorAnswer) keep(r *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(r)
	if err != nil || res.StatusCode < 400 {
		return res, err
	}
	body, readErr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	e.status, e.body, e.header = res.StatusCode, body, res.Header
	return res, readErr
}

// classify turns the SDK's error for a call into an *APIError (with the
// server's Retry-After) when an error answer came back, or a classified
// transport failure otherwise.
func (e *errorAnswer) classify(ctx context.Context, err error) error {
	if e.status == 0 {
		return classifyTransport(ctx, err)
	}
	apiErr := apiErrorFromBody(e.status, e.body)
	apiErr.RetryAfter = retryAfter(e.header, time.Now())
	return apiErr
}

// apiErrorFromBody reads the error that servers put in their bodies:
// OpenAI, vLLM, llama.cpp {"error": {"message", "type", "code"}}, older vLLM
// {"message", "type", "code"}, Ollama {"error": "…"}, FastAPI {"detail": …},
// or plain text.
func apiErrorFromBody(status int, body []byte) *APIError {
	e := &APIError{StatusCode: status}
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &doc) == nil {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		var str string
		switch {
		case len(doc.Error) > 0 && json.Unmarshal(doc.Error, &obj) == nil && obj.Message != "":
			e.Message, e.Type, e.Code = obj.Message, obj.Type, rawCode(obj.Code)
			return e
		case len(doc.Error) > 0 && json.Unmarshal(doc.Error, &str) == nil && str != "":
			e.Message = str
			return e
		case doc.Message != "":
			e.Message, e.Type, e.Code = doc.Message, doc.Type, rawCode(doc.Code)
			return e
		case len(doc.Detail) > 0:
			if json.Unmarshal(doc.Detail, &str) == nil {
				e.Message = str
			} else {
				e.Message = string(doc.Detail)
			}
			return e
		}
	}
	e.Message = oneLine(string(body), 500)
	return e
}

func rawCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// oneLine collapses whitespace and caps s at max bytes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

func asAPIError(err error, target **APIError) bool { return errors.As(err, target) }
