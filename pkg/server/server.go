// Package server is the bot's HTTP face: the ingest API that CI posts test
// reports to, the task API, the dashboard, health and readiness, and the
// Prometheus metrics.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/repourl"
	"github.com/redfix/redfix/pkg/series"
	"github.com/redfix/redfix/pkg/task"
)

// Intake stores submissions durably. Submit keeps nothing of s.Report
// once it returns (a stream holds its own copy): the server reads the
// next report into the same buffer.
type Intake interface {
	Submit(ctx context.Context, s ingest.Submission) (duplicate bool, err error)
}

// Tasks reads the state store; a missing task is task.ErrNotFound.
type Tasks interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
	FindTasks(ctx context.Context, f task.Filter) ([]task.Task, error)
	CountByStatus(ctx context.Context) (map[task.Status]int64, error)
}

// MaxReportBytes bounds a report's size.
const MaxReportBytes = 32 << 20

// Server holds the handlers' dependencies.
type Server struct {
	intake  Intake
	tasks   Tasks
	ready   func(context.Context) error
	opts    Options
	land    LandRates
	log     *zap.Logger
	reg     *prometheus.Registry
	reports *prometheus.CounterVec
	reqs    *prometheus.HistogramVec
	// notReady is whether the last /readyz found a dependency down: the
	// log says so when it changes, not at every probe.
	notReady atomic.Bool
}

// Options are the server's optional settings.
type Options struct {
	// IngestToken, when set, must be sent as "Authorization: Bearer …".
	IngestToken string
	// ReadToken is required to read the dashboard, the task API and the
	// metrics (as a bearer token, or as the password of basic
	// authentication); the ingest token is accepted too. Health probes stay
	// open.
	ReadToken string
	// TrustedUserHeader, when set, names a header that an authenticating
	// proxy in front of the bot sets (and strips from clients): a request
	// that carries it may read.
	TrustedUserHeader string
	// ReadOpen lets anyone read when neither ReadToken nor
	// TrustedUserHeader is set. Without it, and without them, reads are
	// refused (401) with a message naming the settings, except with the
	// ingest token.
	ReadOpen bool
	// Allow lists the repositories that the ingest API accepts (patterns
	// on canonical locations, pkg/repourl); nil accepts none. Submissions
	// marked Verified by an authenticated route need no entry.
	Allow *repourl.Allowlist
	// Ready reports whether the dependencies (NATS, Redis) answer.
	Ready func(context.Context) error
	// Webhooks are the forges' webhook endpoints, by the forge driver's
	// name: each serves POST /api/v1/<name>/webhook ("github").
	Webhooks map[string]http.Handler
	// Land, when set, gives the outcomes of published pull requests: the
	// land rate on the dashboard, in /api/v1/stats and in /metrics.
	Land LandRates
	// Quarantine, when set, serves GET /api/v1/quarantine: the flaky
	// tests triage recorded instead of repairing.
	Quarantine Quarantined
	// History, when set, gives the dashboard and /api/v1/stats their
	// history: rates by day and week, triage's and the gates' reasons,
	// recent pull requests, the time from red CI to pull request.
	History History
	// Events, when set, counts the reports the ingest API accepts and
	// rejects, for the history.
	Events Counter
	// Jobs and Reports, when set, give the depth of the job queue and of
	// the reports waiting for triage.
	Jobs, Reports Backlog
	// Sandbox, when set, says what the sandbox gives the repositories'
	// commands; /readyz shows it.
	Sandbox func() string
	// ReadTimeout bounds how long the dashboard and /api/v1/stats wait for
	// each of their sources (DefaultReadTimeout when 0).
	ReadTimeout time.Duration
	// Retry, when set, serves POST /api/v1/tasks/{id}/retry: a failure
	// group's repair started over on an operator's word.
	Retry Retrier
	// PullRequestState, when set, says where a published pull request
	// stands (open, landed, …); ok is false for one whose outcome is not
	// followed.
	PullRequestState func(ctx context.Context, url string) (state string, ok bool)
}

// New makes a server. reg receives the server's metrics and is served at
// /metrics.
func New(intake Intake, tasks Tasks, reg *prometheus.Registry, opts Options, log *zap.Logger) *Server {
	s := &Server{intake: intake, tasks: tasks, ready: opts.Ready, opts: opts, land: opts.Land, log: log, reg: reg}
	s.reports = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "redfix_reports_total",
		Help: "Test reports received by the ingest API, by result (accepted, duplicate, rejected).",
	}, []string{"result"})
	s.reqs = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "redfix_http_request_duration_seconds",
		Help:    "HTTP request latency by method, route (the path pattern) and status class.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method", "route", "code"})
	for _, r := range []string{"accepted", "duplicate", "rejected"} {
		s.reports.WithLabelValues(r)
	}
	reg.MustRegister(s.reports, s.reqs)
	if s.land != nil {
		reg.MustRegister(&landCollector{land: s.land, log: log})
	}
	if s.ready == nil {
		s.ready = func(context.Context) error { return nil }
	}
	return s
}

// Handler routes the server's endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.route(mux, "POST /api/v1/reports", s.postReport)
	s.route(mux, "GET /api/v1/tasks", s.read(s.listTasks))
	s.route(mux, "GET /api/v1/tasks/{id}", s.read(s.getTask))
	if s.opts.Retry != nil {
		s.route(mux, "POST /api/v1/tasks/{id}/retry", s.retryTask)
	}
	s.route(mux, "GET /api/v1/stats", s.read(s.stats))
	if s.opts.Quarantine != nil {
		s.route(mux, "GET /api/v1/quarantine", s.read(s.listQuarantine))
	}
	for _, name := range slices.Sorted(maps.Keys(s.opts.Webhooks)) {
		hook := s.opts.Webhooks[name]
		s.route(mux, "POST /api/v1/"+name+"/webhook", func(w http.ResponseWriter, r *http.Request) error {
			hook.ServeHTTP(w, r)
			return nil
		})
	}
	s.route(mux, "GET /healthz", func(w http.ResponseWriter, r *http.Request) error {
		_, err := io.WriteString(w, "ok\n")
		return err
	})
	s.route(mux, "GET /readyz", s.readyz)
	s.route(mux, "GET /{$}", s.read(s.dashboard))
	mux.Handle("GET /metrics", s.guardRead(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})))
	return mux
}

// Error is an HTTP error: a message for the client and a cause for the log.
type Error struct {
	Code    int
	Message string
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Cause)
	}
	return e.Message
}

type handlerFunc func(http.ResponseWriter, *http.Request) error

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// route wraps a handler with panic recovery, error mapping, logging and
// latency metrics: errors become responses in this one place.
func (s *Server) route(mux *http.ServeMux, pattern string, h handlerFunc) {
	method, routeName, ok := strings.Cut(pattern, " ")
	if !ok {
		method, routeName = "", pattern
	}
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("handler panicked", zap.String("route", routeName), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
				writeJSON(sw, http.StatusInternalServerError, map[string]string{"error": "internal error"})
			}
			m := method
			if m == "" {
				m = r.Method
			}
			s.reqs.WithLabelValues(m, routeName, fmt.Sprintf("%dxx", sw.code/100)).Observe(time.Since(start).Seconds())
		}()
		if err := h(sw, r); err != nil {
			var he *Error
			if !errors.As(err, &he) {
				he = &Error{Code: http.StatusInternalServerError, Message: "internal error", Cause: err}
			}
			level := s.log.Warn
			if he.Code >= 500 {
				level = s.log.Error
			}
			level("request failed", zap.String("route", routeName), zap.Int("code", he.Code), zap.String("remote", r.RemoteAddr), zap.Error(he))
			writeJSON(sw, he.Code, map[string]string{"error": he.Message})
		}
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// postReport accepts a test report: the body is the report (go test -json
// or JUnit XML), the query names the repository and the commits.
//
//	POST /api/v1/reports?repo=URL&commit=SHA[&good=SHA][&branch=main]
//
// Any other parameter is a 400 naming it.
func (s *Server) postReport(w http.ResponseWriter, r *http.Request) error {
	if s.opts.IngestToken != "" && !tokenEqual(bearer(r), s.opts.IngestToken) {
		s.countReport(r.Context(), "rejected")
		return &Error{Code: http.StatusUnauthorized, Message: "missing or wrong bearer token"}
	}
	if err := knownParameters(r.URL.Query(), "repo", "commit", "good", "branch"); err != nil {
		s.countReport(r.Context(), "rejected")
		return err
	}
	body, release, err := readBody(w, r)
	if err != nil {
		s.countReport(r.Context(), "rejected")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &Error{Code: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("report is larger than %d bytes", MaxReportBytes)}
		}
		return &Error{Code: http.StatusBadRequest, Message: "reading the report", Cause: err}
	}
	q := r.URL.Query()
	sub := ingest.Submission{
		ID:     r.Header.Get("X-Redfix-Delivery"),
		Repo:   q.Get("repo"),
		Commit: q.Get("commit"),
		Good:   q.Get("good"),
		Branch: q.Get("branch"),
		Report: body,
	}
	if err := ingest.Canonicalize(&sub); err != nil {
		s.countReport(r.Context(), "rejected")
		return &Error{Code: http.StatusBadRequest, Message: strings.TrimPrefix(err.Error(), ingest.ErrInvalid.Error()+": ")}
	}
	if err := ingest.Admit(sub, s.opts.Allow); err != nil {
		s.countReport(r.Context(), "rejected")
		return &Error{Code: http.StatusForbidden, Message: err.Error() + " (see http.allow_repos)"}
	}
	// Only what admission needs: a go test -json report is screened, not
	// parsed (triage parses it); JUnit XML is parsed, its parse being its
	// check.
	res, parsed, err := ingest.Screen(sub)
	if err != nil {
		s.countReport(r.Context(), "rejected")
		code := http.StatusUnprocessableEntity
		if sub.Repo == "" || sub.Commit == "" {
			code = http.StatusBadRequest
		}
		return &Error{Code: code, Message: strings.TrimPrefix(err.Error(), ingest.ErrInvalid.Error()+": ")}
	}
	if sub.ID == "" {
		sub.ID = ingest.ContentID(sub)
	}
	if parsed {
		// Parsed once: triage takes this parsed form from the stream.
		sub.Parsed = ingest.ForTriage(res)
	}
	dup, err := s.intake.Submit(r.Context(), sub)
	if err != nil {
		// The buffer is not given back: a publish that failed may still
		// be holding it.
		return &Error{Code: http.StatusServiceUnavailable, Message: "the report could not be stored; retry", Cause: err}
	}
	// Stored: the stream's message and the object store hold their own
	// copies, and nothing below reads the body.
	sub.Report = nil
	release()
	result := "accepted"
	if dup {
		result = "duplicate"
	}
	s.countReport(r.Context(), result)
	s.log.Info("report received", zap.String("submission", sub.ID), zap.String("repo", sub.Repo),
		zap.String("commit", sub.Commit), zap.String("format", res.Format), zap.Bool("duplicate", dup))
	answer := reportAnswer{ID: sub.ID, Duplicate: dup, Format: res.Format}
	if parsed {
		answer.Tests, answer.Failures, answer.BuildErrors = new(res.Total), new(len(res.Failures)), new(len(res.BuildErrors))
		if len(res.Incomplete) > 0 {
			// A cut report: its packages without a final result are
			// recorded as incomplete, and their tests without an outcome
			// as not run.
			answer.Incomplete, answer.NotRun = res.Incomplete, new(len(res.NotRun))
			s.log.Warn("report is incomplete", zap.String("submission", sub.ID), zap.Strings("packages", res.Incomplete), zap.Int("not_run", len(res.NotRun)))
		}
	}
	writeJSON(w, http.StatusAccepted, answer)
	return nil
}

// reportAnswer is the answer to an accepted report: its fields in the
// order of their names, as a map's would be, the counts only for a report
// parsed on admission.
type reportAnswer struct {
	BuildErrors *int     `json:"build_errors,omitempty"`
	Duplicate   bool     `json:"duplicate"`
	Failures    *int     `json:"failures,omitempty"`
	Format      string   `json:"format"`
	ID          string   `json:"id"`
	Incomplete  []string `json:"incomplete,omitempty"`
	NotRun      *int     `json:"not_run,omitempty"`
	Tests       *int     `json:"tests,omitempty"`
}

// countReport counts a report in /metrics and, when rejected, in the
// history. An accepted report is counted in the history by triage when it
// takes the report from the stream, off the request path (a duplicate is
// not a new report). A rejected report's repository is not counted: nobody
// vouched for its name.
func (s *Server) countReport(ctx context.Context, result string) {
	s.reports.WithLabelValues(result).Inc()
	if s.opts.Events == nil || result != "rejected" {
		return
	}
	if err := s.opts.Events.Count(context.WithoutCancel(ctx), time.Now(), series.Count{Event: series.EventReportRejected}); err != nil {
		s.log.Warn("count the rejected report for the dashboard", zap.Error(err))
	}
}

// listTasks lists tasks, the newest created first:
//
//	GET /api/v1/tasks[?status=S][&repo=URL][&limit=N]
//
// status keeps the tasks that stand in S now, repo those of a repository
// (named as reports name it), limit bounds the answer (1 to MaxTaskLimit,
// 100 by default). A parameter it does not know, or a bad value, is a 400
// that says which: a filter is never ignored.
func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	f, err := taskFilter(r.URL.Query())
	if err != nil {
		return &Error{Code: http.StatusBadRequest, Message: err.Error()}
	}
	ts, err := s.tasks.FindTasks(r.Context(), f)
	if err != nil {
		return err
	}
	for i := range ts {
		ts[i] = summarize(ts[i])
	}
	writeJSON(w, http.StatusOK, ts)
	return nil
}

// MaxTaskLimit bounds the tasks one listing returns.
const MaxTaskLimit = 1000

// taskFilter reads the task listing's query: status, repo and limit, each
// at most once; anything else is refused.
func taskFilter(q url.Values) (task.Filter, error) {
	f := task.Filter{Limit: 100}
	for name, vs := range q {
		if len(vs) != 1 {
			return f, fmt.Errorf("give %s once, not %d times", name, len(vs))
		}
		v := vs[0]
		switch name {
		case "status":
			if !slices.Contains(task.Statuses, task.Status(v)) {
				return f, fmt.Errorf("status %q is not one of %v", v, task.Statuses)
			}
			f.Status = task.Status(v)
		case "repo":
			repo, err := repourl.Canonical(v)
			if err != nil {
				return f, fmt.Errorf("repo %q: %v", v, err)
			}
			f.Repo = repo
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxTaskLimit {
				return f, fmt.Errorf("limit %q: want a whole number from 1 to %d", v, MaxTaskLimit)
			}
			f.Limit = n
		default:
			return f, fmt.Errorf("unknown parameter %q (the filters are status, repo and limit)", name)
		}
	}
	return f, nil
}

// summarize drops the bulky parts of a task for listings: the failures'
// outputs, and each round's patch, trajectory and gate details (the
// verdicts stay). The task itself (GET /api/v1/tasks/{id}) has them.
func summarize(t task.Task) task.Task {
	for i := range t.Failures {
		t.Failures[i].Output = ""
	}
	for i := range t.Rounds {
		r := &t.Rounds[i]
		r.Patch, r.Trajectory = "", ""
		gates := make([]task.Gate, len(r.Gates))
		for j, g := range r.Gates {
			g.Detail = ""
			gates[j] = g
		}
		if len(gates) > 0 {
			r.Gates = gates
		}
	}
	return t
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tasks.GetTask(r.Context(), r.PathValue("id"))
	if err != nil {
		if errors.Is(err, task.ErrNotFound) {
			return &Error{Code: http.StatusNotFound, Message: "no task " + r.PathValue("id")}
		}
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}
