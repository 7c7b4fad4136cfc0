package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/redfix/redfix/pkg/task"
)

// Quarantined lists the flaky tests triage recorded; store.Store satisfies
// it.
type Quarantined interface {
	Quarantined(ctx context.Context, limit int) ([]task.QuarantineEntry, error)
}

// listQuarantine is the quarantine report: flaky tests with their evidence,
// the most recently seen first. ?limit=N bounds it (100 by default).
func (s *Server) listQuarantine(w http.ResponseWriter, r *http.Request) error {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return &Error{Code: http.StatusBadRequest, Message: "limit must be a whole number from 1 to 10000"}
		}
		limit = n
	}
	es, err := s.opts.Quarantine.Quarantined(r.Context(), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"flaky_tests": es})
	return nil
}
