package server

import (
	"context"
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/retry"
	"github.com/redfix/redfix/pkg/task"
)

// Retrier starts a failure group's repair over (retry.Retrier).
type Retrier interface {
	Group(ctx context.Context, id, by string) (task.Task, error)
}

// retryAnswer is the answer to a retry: the new task that holds the group.
type retryAnswer struct {
	Group  string      `json:"group"`
	Status task.Status `json:"status"`
	Task   string      `json:"task"`
}

// retryTask starts the failure group of a task over, without a forge:
//
//	POST /api/v1/tasks/{id}/retry
//
// It needs the ingest token, and is refused when none is configured: a
// retry spends a repair (a report only asks for triage). 202 names the new
// task; 404 is a task that is not stored, 409 one whose group is in hand,
// published, or held by a later task (the answer says which).
func (s *Server) retryTask(w http.ResponseWriter, r *http.Request) error {
	if s.opts.IngestToken == "" {
		return &Error{Code: http.StatusForbidden, Message: "retries need the ingest token (http.ingest_token, REDFIX_INGEST_TOKEN), and none is configured; bot replay --task retries where the bot runs"}
	}
	if !tokenEqual(bearer(r), s.opts.IngestToken) {
		return &Error{Code: http.StatusUnauthorized, Message: "missing or wrong bearer token: a retry needs the ingest token"}
	}
	if err := knownParameters(r.URL.Query()); err != nil {
		return err
	}
	id := r.PathValue("id")
	by := "the task API"
	if h := s.opts.TrustedUserHeader; h != "" && r.Header.Get(h) != "" {
		by = r.Header.Get(h) + " through the task API"
	}
	nt, err := s.opts.Retry.Group(r.Context(), id, by)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return &Error{Code: http.StatusNotFound, Message: "no task " + id}
	case errors.Is(err, retry.ErrRefused):
		return &Error{Code: http.StatusConflict, Message: err.Error()}
	case err != nil:
		return &Error{Code: http.StatusServiceUnavailable, Message: "the retry could not be recorded or queued; try again", Cause: err}
	}
	s.log.Info("failure group retried", zap.String("task_id", id), zap.String("new_task", nt.ID), zap.String("fingerprint", nt.Fingerprint), zap.String("by", by))
	writeJSON(w, http.StatusAccepted, retryAnswer{Group: nt.Fingerprint, Status: nt.Status, Task: nt.ID})
	return nil
}
