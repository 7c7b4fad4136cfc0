package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Ops serves what a process without the bot's API (a worker) still
// exposes: /metrics from reg, /healthz, and /readyz, which asks ready and
// says what the sandbox gives the repositories' commands (sandbox, read at
// each request).
func Ops(reg prometheus.Gatherer, ready func(context.Context) error, sandbox func() string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "ready\nsandbox: %s\n", sandbox())
	})
	return mux
}

// readyz answers the bot's readiness probe: "ready" and what the sandbox
// gives the repositories' commands, or 503 with the cause, as a worker's
// /readyz does. A probe is no event: the log says when readiness changes
// (a warning with the cause, then "ready again"), with no stack trace.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		if !s.notReady.Swap(true) {
			s.log.Warn("not ready: a dependency does not answer", zap.Error(err))
		}
		http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
		return nil
	}
	if s.notReady.Swap(false) {
		s.log.Info("ready again")
	}
	sandbox := "not known"
	if s.opts.Sandbox != nil {
		sandbox = s.opts.Sandbox()
	}
	_, err := fmt.Fprintf(w, "ready\nsandbox: %s\n", sandbox)
	return err
}
