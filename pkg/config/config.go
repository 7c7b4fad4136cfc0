// Package config loads redfix's configuration: defaults that make the demo
// need none, a YAML file, then environment variables, in that order.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole configuration of the bot and the workers.
type Config struct {
	// DataDir holds the embedded NATS store, workspaces and local pull
	// requests unless their own settings say otherwise. It is private to
	// its user (PrepareDataDir); by default the user's cache directory's
	// redfix.
	DataDir string `yaml:"data_dir"`
	Log     Log    `yaml:"log"`
	HTTP    HTTP   `yaml:"http"`
	NATS    NATS   `yaml:"nats"`
	Redis   Redis  `yaml:"redis"`
	LLM     LLM    `yaml:"llm"`

	Triage     Triage     `yaml:"triage"`
	Harness    Harness    `yaml:"harness"`
	Validators Validators `yaml:"validators"`
	Judge      Judge      `yaml:"judge"`
	Revert     Revert     `yaml:"revert"`
	Review     Review     `yaml:"review"`
	Worker     Worker     `yaml:"worker"`
	Publish    Publish    `yaml:"publish"`
	GitHub     GitHub     `yaml:"github"`
	GitLab     GitLab     `yaml:"gitlab"`
	Checkouts  Checkouts  `yaml:"checkouts"`
	Sandbox    Sandbox    `yaml:"sandbox"`
	Languages  Languages  `yaml:"languages"`
	// GitRemotes are plain git remotes fixes are pushed to as branches
	// (gitremotes.go).
	GitRemotes []GitRemote `yaml:"git_remotes"`
	// gitRemoteEnv is the git remote the environment configures.
	gitRemoteEnv gitRemoteEnv

	// StartupWait is how long `bot serve` and `worker run` wait at start
	// for NATS and Redis to answer before they exit naming the store and
	// the cause; what waiting cannot cure (a refused password, JetStream
	// off, a NATS server too old) ends the wait at once. 0: one try each.
	StartupWait time.Duration `yaml:"startup_wait"`

	// File is the configuration file the configuration was read from, and
	// SecretFiles the files secrets were read from (the _FILE variables):
	// commands run for repositories must not read them.
	File        string   `yaml:"-"`
	SecretFiles []string `yaml:"-"`
	// RunOf is the data directory that a one-shot command's run directory
	// (DataDir, made by RunDir) lies in, with the caches and the other
	// runs: hidden from the commands run for repositories like DataDir.
	// Empty where DataDir is the data directory itself.
	RunOf string `yaml:"-"`
}

// GitHub configures the GitHub API: a plain token, or a GitHub App (app id
// and private key; each repository's installation is looked up).
type GitHub struct {
	// APIURL is the REST API's base URL: https://api.github.com/ by
	// default, https://HOST/api/v3/ for GitHub Enterprise Server.
	APIURL         string `yaml:"api_url"`
	Token          string `yaml:"token"`
	AppID          int64  `yaml:"app_id"`
	PrivateKeyFile string `yaml:"private_key_file"`

	// GitHubEvents: which repositories and branches are repaired, where
	// their test reports are, and the resync (github.allow, …).
	GitHubEvents `yaml:",inline"`
	// KeepInterval is how often the bot looks at its open pull requests
	// against the default branch's head (pkg/keep); 0 turns it off.
	KeepInterval time.Duration `yaml:"keep_interval"`
}

// Enabled reports whether GitHub credentials are configured.
func (g GitHub) Enabled() bool { return g.Token != "" || g.AppID != 0 }

// Checkouts configures the workers' cache of bare mirrors of remote
// repositories (local paths are cloned directly).
type Checkouts struct {
	// MirrorDir holds the mirrors; empty means DataDir/mirrors.
	MirrorDir string `yaml:"mirror_dir"`
	// MaxMirrorBytes bounds the mirrors' total size; the least recently
	// used are evicted past it.
	MaxMirrorBytes int64 `yaml:"max_mirror_bytes"`
}

// Sandbox configures the confinement of every command run on a
// repository's behalf (tests, builds, vet, gofmt).
type Sandbox struct {
	// Mode is "auto" (confine where the host can, warn loudly where it
	// cannot), "required" (refuse to start where it cannot) or "off".
	Mode string `yaml:"mode"`
	// Network lets every repository's commands use the host's network;
	// NetworkRepos only those of repositories matching a pattern
	// (path.Match on the repository URL or path). Without it, only a
	// dependency setup reaches the network, and only the package
	// registries: its driver's and Registries.
	Network      bool     `yaml:"network"`
	NetworkRepos []string `yaml:"network_repos"`
	// Registries are package registries (URLs, or host:port) every
	// dependency setup may reach besides its driver's own (a mirror that
	// serves its files from a host of its own, say).
	Registries []string `yaml:"registries"`
	// UID and GID are the host user and group a root redfix's commands
	// run as: one that owns nothing (0: 65534, nobody and nogroup).
	UID int `yaml:"uid"`
	GID int `yaml:"gid"`
	// Limits for each process: address space, CPU time, the largest file
	// written, and the size of the private /tmp and $HOME.
	MemoryMB   int           `yaml:"memory_mb"`
	CPUTime    time.Duration `yaml:"cpu_time"`
	FileSizeMB int           `yaml:"file_size_mb"`
	TmpMB      int           `yaml:"tmp_mb"`
	// CacheDir holds each repository's own Go build cache; empty means
	// the data directory's cache.
	CacheDir string `yaml:"cache_dir"`
	// GoCache is "per_repo" (each repository its own build cache) or
	// "shared" (one for all: warm sooner, but one repository's tests can
	// poison another's builds; for repositories that trust one another).
	GoCache string `yaml:"go_cache"`
	// SeedCache keeps the Go build cache every repository's new cache
	// starts from, built by redfix from its own module (`worker seed`
	// makes it ahead of time): empty is the user's cache directory, "off"
	// none.
	SeedCache string `yaml:"seed_cache"`
}

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // json or console
}

// HTTP configures the bot's server.
type HTTP struct {
	Addr string `yaml:"addr"`
	// GracePeriod is how long shutdown waits for requests in flight.
	GracePeriod time.Duration `yaml:"grace_period"`
	// WebhookSecret validates GitHub webhooks.
	WebhookSecret string `yaml:"webhook_secret"`
	// IngestToken, when set, is required as a bearer token on the ingest API.
	IngestToken string `yaml:"ingest_token"`
	// AllowRepos lists the repositories the ingest API accepts: patterns on
	// canonical locations ("https://github.com/org/*", "/srv/repos/**").
	// Empty accepts none.
	AllowRepos []string `yaml:"allow_repos"`
	// ReadToken, when set, is required to read the dashboard, the task API
	// and /metrics (the ingest token is accepted too).
	ReadToken string `yaml:"read_token"`
	// TrustedUserHeader names a header set by an authenticating proxy in
	// front of the bot; a request carrying it may read.
	TrustedUserHeader string `yaml:"trusted_user_header"`
	// ReadOpen lets anyone who reaches the bot read the dashboard, the task
	// API and /metrics when neither ReadToken nor TrustedUserHeader is set.
	// Without it such reads are refused (401), the ingest token's excepted;
	// `bot demo` on loopback reads open by itself.
	ReadOpen bool `yaml:"read_open"`
	// PublicWithoutToken lets the bot listen beyond loopback with no ingest
	// token. Without it, such a configuration is refused at start.
	PublicWithoutToken bool `yaml:"public_without_token"`
}

// NATS configures the queue. An empty URL (and no URLs) starts an
// embedded server.
type NATS struct {
	URL string `yaml:"url"`
	// URLs are a cluster's servers, tried in turn (the client learns the
	// rest of the cluster from the first it reaches); the same as URL with
	// the URLs separated by commas. Set URL or URLs, not both.
	URLs []string `yaml:"urls"`
	// Replicas is how many copies of each stream (reports, jobs, parked
	// messages) and of the object store a cluster keeps: 3 on a
	// three-node cluster, 1 on a single server.
	Replicas int `yaml:"replicas"`
	// User and Password, or Token, or CredentialsFile (a NATS .creds file:
	// a user JWT and its NKey seed) log in to a server that requires it.
	// Credentials in the URL (nats://user:pass@host) work too.
	User            string        `yaml:"user"`
	Password        string        `yaml:"password"`
	Token           string        `yaml:"token"`
	CredentialsFile string        `yaml:"credentials_file"`
	Stream          string        `yaml:"stream"`
	AckWait         time.Duration `yaml:"ack_wait"`
	MaxDeliver      int           `yaml:"max_deliver"`
}

// Redis configures the state store: one server (Addr), a primary found
// through Sentinel (Sentinel), or a Redis Cluster (ClusterAddrs); set one.
// None starts an embedded Redis-protocol server (memory only).
type Redis struct {
	Addr         string        `yaml:"addr"`
	Sentinel     RedisSentinel `yaml:"sentinel"`
	ClusterAddrs []string      `yaml:"cluster_addrs"`
	// WaitReplicas is how many replicas must have the writes that keep a
	// failure group to one pull request (group claims, publish claims, the
	// published mark) before they count: redfix sends WAIT after them and
	// fails the step when fewer replicas answer within WaitTimeout, so
	// that a failover cannot lose a claim that was acted on. 0: no WAIT.
	WaitReplicas int           `yaml:"wait_replicas"`
	WaitTimeout  time.Duration `yaml:"wait_timeout"`
	Password     string        `yaml:"password"`
	DB           int           `yaml:"db"`
	Prefix       string        `yaml:"prefix"`
	// TaskRetention is how long a task is kept once it reached a final
	// status (published, no_patch, failed, dropped, over_budget), with its
	// index entries and per-task keys; queued and running tasks are never
	// expired. 0 keeps finished tasks forever.
	TaskRetention time.Duration `yaml:"task_retention"`
	// RetentionSweepInterval is how often the bot removes the expired
	// tasks from the indexes; one replica sweeps per interval.
	RetentionSweepInterval time.Duration `yaml:"retention_sweep_interval"`
}

// Triage configures reproduction, flakiness and bisection.
type Triage struct {
	Reruns         int      `yaml:"reruns"`
	MaxBisectSteps int      `yaml:"max_bisect_steps"`
	OptOut         []string `yaml:"opt_out"`
	// DailyJobs is how many jobs each repository may get per UTC day (0:
	// no limit); DailyJobsByRepo sets it for some repositories, by URL.
	DailyJobs       int            `yaml:"daily_jobs"`
	DailyJobsByRepo map[string]int `yaml:"daily_jobs_by_repo"`
	// MaxGroupsPerReport is how many failure groups of one report triage
	// decides one by one (reproduces, bisects, makes a task of); the
	// groups past it are one dropped outcome that says how many.
	MaxGroupsPerReport int `yaml:"max_groups_per_report"`
	// BisectConfidence is the posterior a culprit needs before bisection
	// names it (0 for the default, 0.99).
	BisectConfidence float64 `yaml:"bisect_confidence"`
	// BisectParallel is how many commits bisection tests at once, each in
	// a worktree of its own (0 or 1: one at a time).
	BisectParallel int `yaml:"bisect_parallel"`
	// Concurrency is how many reports triage works on at once (0: one per
	// CPU; never more than the CPUs).
	Concurrency int `yaml:"concurrency"`
	// ClaimTTL is how long a failure group's claim outlives a triage that
	// stopped renewing it (a crashed bot); VerdictTTL how long a dropped
	// or unrepaired group's verdict holds before the same failure is
	// triaged again.
	ClaimTTL   time.Duration `yaml:"claim_ttl"`
	VerdictTTL time.Duration `yaml:"verdict_ttl"`
	// ReportAckWait is how long a report held by a bot that stopped
	// heartbeating waits before another bot triages it (also a report the
	// server handed out as it stopped, which no bot received: short, as a
	// triage heartbeats every third of it); ReportRetryDelay
	// the first delay after a failed triage (doubling up to 5 min);
	// ReportMaxAge how long a failing report is retried before it is parked.
	ReportAckWait    time.Duration `yaml:"report_ack_wait"`
	ReportRetryDelay time.Duration `yaml:"report_retry_delay"`
	ReportMaxAge     time.Duration `yaml:"report_max_age"`
}

// Harness configures the agent loop and its budgets. A zero budget is no
// limit, except MaxSteps.
type Harness struct {
	MaxSteps int `yaml:"max_steps"`
	// Per task, across its attempts and feedback rounds.
	MaxTokens  int           `yaml:"max_tokens"`
	MaxCostUSD float64       `yaml:"max_cost_usd"`
	MaxWall    time.Duration `yaml:"max_wall_time"`
	// Per repository and UTC day, across its tasks and workers (counted
	// in the store): a task starts only while some is left.
	RepoDailyMaxTokens  int     `yaml:"repo_daily_max_tokens"`
	RepoDailyMaxCostUSD float64 `yaml:"repo_daily_max_cost_usd"`
	// Samples is how many independent attempts a task gets (k); they run
	// in parallel up to the worker's slots, at SampleTemperature when k > 1.
	Samples           int     `yaml:"samples"`
	SampleTemperature float64 `yaml:"sample_temperature"`
	// FeedbackRounds is how many times a candidate rejected by a gate goes
	// back to the agent with the gate's evidence.
	FeedbackRounds int `yaml:"feedback_rounds"`
}

// Validators configures the gates.
type Validators struct {
	OracleRuns     int  `yaml:"oracle_runs"`
	AllowTestEdits bool `yaml:"allow_test_edits"`
	// AllowedPaths are the globs a patch may touch (empty: every path).
	// Build, CI, ownership, git metadata and hook files, vendor/ and the
	// module files stay refused unless a pattern names them explicitly
	// ("Makefile", ".github/**", "go.mod"): "**" does not.
	AllowedPaths []string `yaml:"allowed_paths"`
	// RegressionBudget bounds the time spent on the tests of the packages
	// that depend on the changed ones (negative: none are run).
	RegressionBudget time.Duration `yaml:"regression_budget"`
	// MaxPatchLines and MaxPatchFiles bound a patch's changed lines and
	// files (0: no limit).
	MaxPatchLines int `yaml:"max_patch_lines"`
	MaxPatchFiles int `yaml:"max_patch_files"`
}

// Judge configures the LLM judge.
type Judge struct {
	// Votes is the size of the committee: that many independent answers,
	// the patch accepted only on a strict majority. 1 asks once.
	Votes int `yaml:"votes"`
}

// Worker configures job consumption.
type Worker struct {
	Slots     int           `yaml:"slots"`
	Heartbeat time.Duration `yaml:"heartbeat"`
	JobTime   time.Duration `yaml:"job_timeout"`
	// ShutdownTimeout bounds how long a stopping worker waits for its
	// jobs to be handed back to the queue; the pod's
	// terminationGracePeriodSeconds must exceed it.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// MetricsAddr, when set, serves /metrics, /healthz and /readyz.
	MetricsAddr string `yaml:"metrics_addr"`
	// MemoryLimitMB is the worker process's soft memory limit in MiB
	// (runtime/debug.SetMemoryLimit), for `worker run` and the worker's
	// one-shot commands; 0 sets none. GOMEMLIMIT in the environment wins.
	MemoryLimitMB int `yaml:"memory_limit_mb"`
}

// The worker's soft memory limit (Worker.MemoryLimitMB). The default is
// room for the agent, its code index and the gates of one job, well above
// what they hold (under 100 MiB in `worker validate` and `worker repair`),
// and below the container's limit in the shipped manifests, which the
// repositories' own commands share; a limit below the minimum would have
// the collector run without pause.
const (
	DefaultWorkerMemoryLimitMB = 1024
	MinWorkerMemoryLimitMB     = 64
)

// Publish configures where pull requests go.
type Publish struct {
	// Mode is "local" (a branch and a directory, the default), "github"
	// or "gitlab": each remote repository's fix is a change request on
	// the forge that serves it (a pull request on GitHub, a merge request
	// on GitLab), and the forge named must be configured. Empty means
	// "github" or "gitlab" when one is configured, else "local".
	Mode string `yaml:"mode"`
	Dir  string `yaml:"dir"`
}

// Default is the configuration with no file and no environment.
func Default() Config {
	return Config{
		DataDir: defaultDataDir(),
		Log:     Log{Level: "info", Format: "console"},
		HTTP:    HTTP{Addr: "127.0.0.1:8080", GracePeriod: 20 * time.Second},
		NATS:    NATS{Stream: "REDFIX_JOBS", AckWait: 2 * time.Minute, MaxDeliver: 5, Replicas: 1},
		Redis:   Redis{Prefix: "redfix", WaitTimeout: time.Second, TaskRetention: 90 * 24 * time.Hour, RetentionSweepInterval: time.Hour},
		LLM:     LLM{Provider: "openai", Timeout: 2 * time.Minute, MaxRetries: 4, ToolFormat: "native"},
		Triage: Triage{Reruns: 5, MaxBisectSteps: 32, MaxGroupsPerReport: 20, ClaimTTL: 5 * time.Minute, VerdictTTL: 6 * time.Hour,
			ReportAckWait: time.Minute, ReportRetryDelay: 5 * time.Second, ReportMaxAge: 24 * time.Hour},
		Harness: Harness{MaxSteps: 40, Samples: 1, SampleTemperature: 0.7, FeedbackRounds: 1},
		Validators: Validators{
			OracleRuns:       3,
			RegressionBudget: 5 * time.Minute,
			MaxPatchLines:    400,
			MaxPatchFiles:    12,
		},
		Judge:   Judge{Votes: 1},
		Revert:  defaultRevert,
		Review:  Review{MaxRevisions: 3, Commands: true},
		Worker:  Worker{Slots: 1, Heartbeat: 20 * time.Second, JobTime: 30 * time.Minute, ShutdownTimeout: 30 * time.Second, MemoryLimitMB: DefaultWorkerMemoryLimitMB},
		Publish: Publish{},
		GitHub: GitHub{
			APIURL: "https://api.github.com/",
			GitHubEvents: GitHubEvents{
				ResyncInterval: 10 * time.Minute,
				ResyncLookback: 24 * time.Hour,
			},
			KeepInterval: 30 * time.Minute,
		},
		GitLab:    GitLab{URL: "https://gitlab.com", ResyncInterval: 10 * time.Minute, ResyncLookback: 24 * time.Hour},
		Checkouts: Checkouts{MaxMirrorBytes: 10 << 30},
		Sandbox:   Sandbox{Mode: "auto", GoCache: "per_repo", MemoryMB: 4096, CPUTime: 10 * time.Minute, FileSizeMB: 1024, TmpMB: 1024},

		StartupWait: 15 * time.Second,
	}
}

// Load reads the defaults, then the YAML file at path (if path is not
// empty), then the environment (getenv, usually os.Getenv). Every path it
// returns is absolute: a relative one is taken from the working directory
// now, once.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Default()
	cfg.File = path
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("read config %s: %w", path, err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			return Config{}, fmt.Errorf("parse config %s: %w", path, err)
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return Config{}, err
	}
	if err := cfg.loadGitRemotes(getenv); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	cfg.normalizeServers()
	if err := cfg.absolutePaths(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
