package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/command"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/embedded"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/github"
	"github.com/redfix/redfix/pkg/forge/github/event"
	"github.com/redfix/redfix/pkg/forge/github/webhook"
	"github.com/redfix/redfix/pkg/forge/gitlab"
	"github.com/redfix/redfix/pkg/forge/inflight"
	"github.com/redfix/redfix/pkg/history"
	"github.com/redfix/redfix/pkg/ingest"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/queue"
	"github.com/redfix/redfix/pkg/retry"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/server"
	"github.com/redfix/redfix/pkg/store"
	"github.com/redfix/redfix/pkg/stream"
	"github.com/redfix/redfix/pkg/triage"
	"github.com/redfix/redfix/pkg/worker"
)

// EmbeddedNATS is System.NATSURL for an embedded NATS server, which
// listens on no port.
const EmbeddedNATS = "embedded (in process)"

// System is a running redfix: its connections to NATS and Redis (embedded
// ones when the configuration names none), the job queue, the report
// intake, the store and the metrics registry.
type System struct {
	NATSURL   string
	RedisAddr string
	Store     *store.Store
	Jobs      *queue.Queue
	Intake    *ingest.Intake
	Registry  *prometheus.Registry
	// Forges are the configured forges (forges.go), the one place that
	// chooses a repository's forge; GitHub and GitLab are the GitHub and
	// GitLab drivers among them, nil when they are not configured.
	Forges *forge.Forges
	GitHub *github.Forge
	GitLab *gitlab.Forge
	// Reverter, when set before RunTriage, opens the reverts that
	// /redfix revert asks for; nil answers that reverts are not available.
	Reverter command.Reverter
	// Sandbox is what the host gives the commands run for repositories;
	// /readyz says it. Set it with SetSandbox.
	Sandbox sandbox.Status
	// TriageRunner, when set before RunTriage, runs triage's tests (each
	// report's language driver otherwise; triage.ReportRuns(nil, …)
	// reports the driver's runs).
	TriageRunner triage.Runner

	log     *zap.Logger
	nc      *nats.Conn
	rdb     redis.UniversalClient
	closers []func()

	// triage counts what triage made of the reports; registered by the
	// bot's Handler or RunTriage, never by a worker.
	triage     *triage.Metrics
	triageOnce sync.Once
	sandbox    *sandbox.Gauge
	// modelErrors counts the model's failed calls; registered by the
	// first NewPipeline (the processes that call the model).
	modelErrors     *prometheus.CounterVec
	modelErrorsOnce sync.Once
	clusterOnce     sync.Once

	// waits are the triages someone waits for (Expect): nothing is kept
	// for a submission nobody asked about.
	waits *triage.Waits
}

// Start connects (or starts embedded servers), checks that each store
// answers (NATS with JetStream, Redis with the configured credentials),
// waiting at most cfg.StartupWait, and opens the streams. Its errors name
// the store's address and the cause.
func Start(ctx context.Context, cfg config.Config, log *zap.Logger) (_ *System, err error) {
	s := &System{log: log, Registry: prometheus.NewRegistry()}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerBuildInfo(s.Registry)

	js, err := s.startNATS(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rcfg, addr := cfg, cfg.Redis.Addr
	if !cfg.Redis.External() {
		// Its password is this process's alone: handed to its client
		// here, written nowhere.
		r, err := embedded.StartRedis()
		if err != nil {
			return nil, fmt.Errorf("start embedded Redis: %w", err)
		}
		s.closers = append(s.closers, r.Close)
		addr, s.RedisAddr = r.Addr(), r.Addr()
		rcfg.Redis.Password = r.Password()
	} else {
		s.RedisAddr = cfg.Redis.Describe()
	}
	s.rdb = redisClient(rcfg, addr)
	rdb := s.rdb
	s.closers = append(s.closers, func() { _ = rdb.Close() })
	if err := checkRedis(ctx, s.rdb, s.RedisAddr, rcfg.Redis.Password, cfg.StartupWait); err != nil {
		return nil, err
	}
	s.Store = store.New(s.rdb, cfg.Redis.Prefix)
	s.Store.SetDurability(store.Durability{Replicas: cfg.Redis.WaitReplicas, Timeout: cfg.Redis.WaitTimeout})
	s.Store.Redact(redactor(cfg))
	if s.Forges, err = newForges(cfg, s.log); err != nil {
		return nil, err
	}
	s.GitHub, s.GitLab = githubOf(s.Forges), gitlabOf(s.Forges)
	s.Store.SetClaimTTLs(store.ClaimTTLs{Triage: cfg.Triage.ClaimTTL, Verdict: cfg.Triage.VerdictTTL})
	s.Store.SetTaskRetention(cfg.Redis.TaskRetention)
	s.Registry.MustRegister(s.Store.MemoryFullMetric())

	s.Jobs, err = whileElecting(ctx, cfg.StartupWait, func() (*queue.Queue, error) {
		return queue.Open(ctx, js, queueConfig(cfg), log.Named("queue"))
	})
	if err != nil {
		return nil, err
	}
	s.Intake, err = whileElecting(ctx, cfg.StartupWait, func() (*ingest.Intake, error) {
		return ingest.Open(ctx, js, intakeConfig(cfg), log.Named("ingest"))
	})
	if err != nil {
		return nil, err
	}
	s.Registry.MustRegister(s.Jobs.MalformedMetric())
	s.waits = &triage.Waits{Tasks: s.Store}
	s.sandbox = sandbox.NewGauge(s.Registry, cfg.Sandbox.Mode)
	return s, nil
}

// startNATS connects to the configured NATS, or starts an embedded one when
// none is configured, and checks it (see Start).
func (s *System) startNATS(ctx context.Context, cfg config.Config) (_ jetstream.JetStream, err error) {
	log := s.log
	if cfg.NATS.URL == "" {
		// No TCP port: only this process's clients reach it, in process,
		// with the token it made (no other process may use an embedded
		// server: `worker run` and `bot replay` need a configured NATS).
		n, err := embedded.StartNATS(ctx, embedded.Options{StoreDir: filepath.Join(cfg.DataDir, "nats"), DontListen: true, Log: log.Named("nats")})
		if err != nil {
			return nil, fmt.Errorf("start embedded NATS: %w", err)
		}
		s.closers = append(s.closers, n.Shutdown)
		s.NATSURL = EmbeddedNATS
		if s.nc, err = n.Connect(nats.Name("redfix")); err != nil {
			return nil, fmt.Errorf("connect to embedded NATS: %w", err)
		}
	} else {
		s.NATSURL = redactURL(cfg.NATS.URL)
		opts := append(NATSAuth(cfg.NATS), nats.Name("redfix"), nats.MaxReconnects(-1),
			nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
				if !nc.IsClosed() { // not when closed on purpose
					log.Warn("NATS disconnected", zap.Error(err))
				}
			}),
			nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS reconnected") }))
		if s.nc, err = connectNATS(ctx, cfg.NATS.URL, cfg.StartupWait, opts); err != nil {
			return nil, err
		}
	}
	nc := s.nc
	s.closers = append(s.closers, func() { _ = nc.Drain() })
	// Publishes are sent asynchronously and their acknowledgements awaited
	// (stream.Publish): the client forgets one that never comes.
	js, err := jetstream.New(s.nc, jetstream.WithPublishAsyncTimeout(stream.PublishTimeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	if err := checkJetStream(ctx, s.nc, js, s.NATSURL, cfg.StartupWait); err != nil {
		return nil, err
	}
	return js, nil
}

// queueConfig and intakeConfig are the job queue's and the report intake's
// settings from the configuration.
func queueConfig(cfg config.Config) queue.Config {
	return queue.Config{Stream: cfg.NATS.Stream, AckWait: cfg.NATS.AckWait, MaxDeliver: cfg.NATS.MaxDeliver, Replicas: cfg.NATS.Replicas}
}

func intakeConfig(cfg config.Config) ingest.Config {
	return ingest.Config{AckWait: cfg.Triage.ReportAckWait, RetryDelay: cfg.Triage.ReportRetryDelay, MaxAge: cfg.Triage.ReportMaxAge, Replicas: cfg.NATS.Replicas}
}

// NATSAuth is how a client logs in to NATS with the configured credentials
// (none: no option, for a server that requires none, or credentials in the
// URL).
func NATSAuth(c config.NATS) []nats.Option {
	switch {
	case c.User != "":
		return []nats.Option{nats.UserInfo(c.User, c.Password)}
	case c.Token != "":
		return []nats.Option{nats.Token(c.Token)}
	case c.CredentialsFile != "":
		return []nats.Option{nats.UserCredentials(c.CredentialsFile)}
	}
	return nil
}

// Close stops everything Start started, in reverse order.
func (s *System) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Ready reports whether NATS and Redis answer.
func (s *System) Ready(ctx context.Context) error {
	if s.nc == nil || !s.nc.IsConnected() {
		return errors.New("NATS is not connected")
	}
	if err := s.Store.Ready(ctx); err != nil {
		return err
	}
	return s.Jobs.Ready(ctx)
}

// SetSandbox records what the host gives the commands run for
// repositories: /readyz says it, redfix_sandbox_confined counts it.
func (s *System) SetSandbox(st sandbox.Status) {
	s.Sandbox = st
	s.sandbox.Set(st.Confined)
}

// NewPipeline assembles the repair pipeline the configuration describes
// for this system's worker: its store as the ledger, its forges, and its
// registry counting the model's failed calls
// (redfix_model_errors_total).
func (s *System) NewPipeline(cfg config.Config) (*worker.Pipeline, error) {
	s.modelErrorsOnce.Do(func() { s.modelErrors = llm.NewErrorCounter(s.Registry) })
	count := func(class string) { s.modelErrors.WithLabelValues(class).Inc() }
	return newPipeline(cfg, s.Store, s.Forges, count, s.log)
}

// RegisterClusterMetrics adds the figures of the shared streams (queue lag,
// oldest job's age, triage backlog, parked messages) to the registry. The
// bot exports them, workers do not: their number follows the load, and a
// gauge every worker exported would multiply when summed. Calling it again
// does nothing.
func (s *System) RegisterClusterMetrics() {
	s.clusterOnce.Do(func() {
		s.Registry.MustRegister(&stream.ClusterCollector{Jobs: s.Jobs.Stream(), Reports: s.Intake.Stream(), Log: s.log.Named("metrics")})
	})
}

// triageMetrics registers triage's metrics, once: the bot's series
// (RunTriage counts into them; the bot's Handler shows them from its start).
func (s *System) triageMetrics() *triage.Metrics {
	s.triageOnce.Do(func() { s.triage = triage.NewMetrics(s.Registry) })
	return s.triage
}

// Handler is the bot's HTTP handler; it registers the cluster metrics and
// triage's.
func (s *System) Handler(cfg config.Config) http.Handler {
	s.RegisterClusterMetrics()
	// GitHub's webhook is served whether or not credentials are
	// configured: its deliveries are stored, and a run's is refused when
	// it is processed (nothing can read the run).
	s.triageMetrics()
	hooks := map[string]http.Handler{
		github.Name: webhook.NewHandler(cfg.HTTP.WebhookSecret, s.Intake, githubFilter(cfg), s.log.Named("webhook")),
		gitlab.Name: s.gitlabWebhook(cfg),
	}
	return server.New(s.Intake, s.Store, s.Registry, server.Options{
		IngestToken: cfg.HTTP.IngestToken, ReadToken: cfg.HTTP.ReadToken, TrustedUserHeader: cfg.HTTP.TrustedUserHeader, ReadOpen: cfg.HTTP.ReadOpen,
		Allow: allowlist(cfg), Ready: s.Ready, Webhooks: hooks, Land: s.Store, Quarantine: s.Store,
		History: s.Store, Events: s.Store, Jobs: s.Jobs.Stream(), Reports: s.Intake.Stream(), PullRequestState: forge.ChangeState(s.Forges, s.Store),
		Retry:   retry.Retrier{State: s.Store, Jobs: s.Jobs},
		Sandbox: func() string { return s.Sandbox.String() },
		// A report of a repository whose fix has no way is refused.
		Deliveries: deliveryWays(cfg, s.Forges),
	}, s.log.Named("http")).Handler()
}

// OpsHandler serves what a worker exposes: /metrics, /healthz and /readyz
// (server.Ops).
func (s *System) OpsHandler() http.Handler {
	return server.Ops(s.Registry, s.Ready, func() string { return s.Sandbox.String() })
}

// TriageEvent is what triage did with one failure group.
type TriageEvent = triage.Outcome

// RunTriage triages stored submissions until ctx ends. onEvent, when set,
// hears of every group's outcome.
func (s *System) RunTriage(ctx context.Context, cfg config.Config, onEvent func(TriageEvent)) error {
	langs, err := languages(cfg, s.log)
	if err != nil {
		return err
	}
	mirrors := ownMirrors(cfg, s.Forges, "triage")
	t := triage.New(s.Store, s.Jobs, s.TriageRunner, triage.Config{
		Reruns:          cfg.Triage.Reruns,
		WorkDir:         filepath.Join(cfg.DataDir, "workspaces"),
		MaxBisectSteps:  cfg.Triage.MaxBisectSteps,
		OptOut:          cfg.Triage.OptOut,
		DailyJobs:       cfg.Triage.DailyJobs,
		DailyJobsByRepo: cfg.Triage.DailyJobsByRepo,
		Confidence:      cfg.Triage.BisectConfidence,
		BisectParallel:  cfg.Triage.BisectParallel,
		ClaimRefresh:    s.Store.ClaimTTLs().Triage / 4,
		// Reports from forges name remote repositories: triage checks them
		// out from mirrors, with the forge's credentials, as workers do.
		Checkouts: mirrors,
		// With no forge serving the repository, the rule says "not checked".
		HumanFixes: inflight.HumanFixes{Forges: s.Forges},
		// A report's failure groups past the cap are one dropped outcome.
		MaxGroupsPerReport: cfg.Triage.MaxGroupsPerReport,
		// Each report's tests run with its repository's language driver.
		Languages: langs,
		// A repository's .redfix.yaml, read from the mirror at the commit.
		RepoPolicies: NewRepoPolicies(cfg, s.Forges, mirrors, s.log.Named("repoconfig")),
		// Change requests from forks, where their forge's setting allows
		// (github.forks, gitlab.forks).
		Forks: newForkOptIns(cfg, s.Forges),
		// A retry is held to a policy's limit of open pull requests.
		OpenPulls: inflight.Own{Forges: s.Forges},
	}, s.log.Named("triage"))
	in := &triage.Intake{
		Reports: s.Intake, Slots: cfg.Triage.Concurrency, Triage: t,
		// Each forge's stored events, by the kind its webhook stores them as.
		Events: map[string]triage.Events{event.Kind: s.githubProcessor(cfg, t), gitlab.Name: s.gitlabProcessor(cfg, t)},
		Allow:  allowlist(cfg), Record: s.history(), Metrics: s.triageMetrics(), Waits: s.waits, OnOutcome: onEvent,
		// Triage's verdict as a check run on the red commit.
		Verdicts: s.triageVerdicts(),
		// A report of a repository whose fix has no way is parked.
		Deliveries: deliveryWays(cfg, s.Forges),
	}
	return in.Run(ctx)
}

func (s *System) history() history.Recorder {
	return history.Recorder{Store: s.Store, Log: s.log.Named("history")}
}

// Expect registers a wait for the triage of the submission with id (see
// triage.Waits): register it before the submission is sent.
func (s *System) Expect(submission string) *triage.Expectation {
	return s.waits.Expect(submission)
}

// RunWorker consumes jobs with pipe until ctx ends.
func (s *System) RunWorker(ctx context.Context, cfg config.Config, pipe *worker.Pipeline) error {
	if pipe.Spending == nil {
		// Each repository's daily model budget is counted in the store
		// that every worker shares.
		pipe.Spending = s.Store
	}
	c := &worker.Consumer{
		Jobs: s.Jobs, Pipeline: pipe, Tasks: s.workerTasks(forge.FixRecorder{Forges: s.Forges, Tasks: s.Store, Fixes: s.Store, Log: s.log.Named("outcomes")}), Spends: s.Store, Slots: cfg.Worker.Slots,
		Heartbeat: cfg.Worker.Heartbeat, JobTimeout: cfg.Worker.JobTime, DrainTimeout: cfg.Worker.ShutdownTimeout,
		Metrics: worker.NewMetrics(s.Registry), Record: s.history(), Once: s.Store, Log: s.log.Named("worker"),
		// A worker that is not ready (Redis down) pulls no job until it is.
		Ready: s.Ready,
	}
	return c.Run(ctx)
}

// redisClient is a client of the configured Redis, with the configuration's
// credentials and database: of the primary Sentinel names (found again
// after a failover), of a Redis Cluster, or of the one server at addr.
func redisClient(cfg config.Config, addr string) redis.UniversalClient {
	r := cfg.Redis
	switch {
	case r.Sentinel.Enabled():
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: r.Sentinel.Master, SentinelAddrs: r.Sentinel.Addrs, SentinelPassword: r.Sentinel.Password,
			Password: r.Password, DB: r.DB,
		})
	case len(r.ClusterAddrs) > 0:
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.ClusterAddrs, Password: r.Password})
	}
	return redis.NewClient(&redis.Options{Addr: addr, Password: r.Password, DB: r.DB})
}
