package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/redfix/redfix/pkg/egress"
	"github.com/redfix/redfix/pkg/repourl"
)

// PublishMode is the publisher to use: publish.mode, else "github" when
// GitHub is configured, "gitlab" when GitLab is, else "local". A forge's
// mode publishes each remote repository's fix on the forge that serves it.
func (c Config) PublishMode() string {
	switch {
	case c.Publish.Mode != "":
		return c.Publish.Mode
	case c.GitHub.Enabled():
		return "github"
	case c.GitLab.Enabled():
		return "gitlab"
	}
	return "local"
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.HTTP.ReadOpen && (c.HTTP.ReadToken != "" || c.HTTP.TrustedUserHeader != "") {
		errs = append(errs, errors.New("http.read_open (REDFIX_READ_OPEN) opens reading to anyone, and http.read_token or http.trusted_user_header closes it: choose one"))
	}
	errs = append(errs, c.validateTriage()...)
	errs = append(errs, c.Revert.validate()...)
	errs = append(errs, c.validateWorker()...)
	errs = append(errs, c.validateRuntime()...)
	errs = append(errs, c.validatePublish()...)
	errs = append(errs, c.validateServers()...)
	errs = append(errs, c.validateGitRemotes()...)
	errs = append(errs, c.GitHub.GitHubEvents.validate()...)
	errs = append(errs, c.GitHub.validateKeep()...)
	errs = append(errs, c.GitLab.validate()...)
	errs = append(errs, c.validateModel()...)
	errs = append(errs, c.Languages.validate()...)
	errs = append(errs, c.Sandbox.validate()...)
	return errors.Join(errs...)
}

// validateTriage checks the triage, harness and gate settings.
func (c Config) validateTriage() []error {
	var errs []error
	if c.Triage.Reruns < 1 {
		errs = append(errs, fmt.Errorf("triage.reruns must be at least 1, got %d", c.Triage.Reruns))
	}
	if c.Triage.BisectConfidence != 0 && (c.Triage.BisectConfidence < 0.5 || c.Triage.BisectConfidence >= 1) {
		errs = append(errs, fmt.Errorf("triage.bisect_confidence must be at least 0.5 and below 1, got %v", c.Triage.BisectConfidence))
	}
	if c.Triage.DailyJobs < 0 {
		errs = append(errs, fmt.Errorf("triage.daily_jobs must not be negative, got %d", c.Triage.DailyJobs))
	}
	for repo, n := range c.Triage.DailyJobsByRepo {
		if n < 0 {
			errs = append(errs, fmt.Errorf("triage.daily_jobs_by_repo[%s] must not be negative, got %d", repo, n))
		}
	}
	if c.Triage.MaxGroupsPerReport < 1 {
		errs = append(errs, fmt.Errorf("triage.max_groups_per_report must be at least 1, got %d", c.Triage.MaxGroupsPerReport))
	}
	if c.Triage.BisectParallel < 0 || c.Triage.BisectParallel > 64 {
		errs = append(errs, fmt.Errorf("triage.bisect_parallel must be 0..64, got %d", c.Triage.BisectParallel))
	}
	if c.Harness.MaxSteps < 3 {
		errs = append(errs, fmt.Errorf("harness.max_steps must be at least 3, got %d", c.Harness.MaxSteps))
	}
	if c.Validators.OracleRuns < 1 {
		errs = append(errs, fmt.Errorf("validators.oracle_runs must be at least 1, got %d", c.Validators.OracleRuns))
	}
	if c.Validators.MaxPatchLines < 0 || c.Validators.MaxPatchFiles < 0 {
		errs = append(errs, fmt.Errorf("validators.max_patch_lines and max_patch_files must not be negative, got %d and %d", c.Validators.MaxPatchLines, c.Validators.MaxPatchFiles))
	}
	return errs
}

// validateWorker checks the review, judge and worker settings.
func (c Config) validateWorker() []error {
	var errs []error
	if c.Review.MaxRevisions < 0 {
		errs = append(errs, fmt.Errorf("review.max_revisions must not be negative, got %d", c.Review.MaxRevisions))
	}
	if c.Judge.Votes < 1 || c.Judge.Votes > 15 {
		errs = append(errs, fmt.Errorf("judge.votes must be between 1 and 15, got %d", c.Judge.Votes))
	}
	if c.Worker.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("worker.shutdown_timeout must not be negative, got %s", c.Worker.ShutdownTimeout))
	}
	if n := c.Worker.MemoryLimitMB; n != 0 && n < MinWorkerMemoryLimitMB {
		errs = append(errs, fmt.Errorf("worker.memory_limit_mb must be 0 (no limit) or at least %d, got %d", MinWorkerMemoryLimitMB, n))
	}
	if c.Worker.Slots < 1 {
		errs = append(errs, fmt.Errorf("worker.slots must be at least 1, got %d", c.Worker.Slots))
	}
	return errs
}

// validateRuntime checks how the service runs: NATS's credentials and
// deliveries, Redis's retention, the start-up wait, the log level and the
// repositories the API accepts (validateServers checks their addresses).
func (c Config) validateRuntime() []error {
	var errs []error
	if n := nonEmpty(c.NATS.User+c.NATS.Password, c.NATS.Token, c.NATS.CredentialsFile); n > 1 {
		errs = append(errs, errors.New("nats: set one of user and password, token, or credentials_file"))
	}
	if (c.NATS.User == "") != (c.NATS.Password == "") {
		errs = append(errs, errors.New("nats.user and nats.password go together"))
	}
	if c.StartupWait < 0 {
		errs = append(errs, fmt.Errorf("startup_wait must not be negative, got %s", c.StartupWait))
	}
	if c.Redis.TaskRetention < 0 {
		errs = append(errs, fmt.Errorf("redis.task_retention must not be negative (0 keeps finished tasks forever), got %s", c.Redis.TaskRetention))
	}
	if c.Redis.RetentionSweepInterval < time.Second {
		errs = append(errs, fmt.Errorf("redis.retention_sweep_interval must be at least 1s, got %s", c.Redis.RetentionSweepInterval))
	}
	if c.NATS.MaxDeliver < 1 {
		errs = append(errs, fmt.Errorf("nats.max_deliver must be at least 1, got %d", c.NATS.MaxDeliver))
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level must be debug, info, warn or error, got %q", c.Log.Level))
	}
	if _, err := repourl.NewAllowlist(c.HTTP.AllowRepos...); err != nil {
		errs = append(errs, fmt.Errorf("http.allow_repos: %w", err))
	}
	return errs
}

// validatePublish checks where fixes are published and the GitHub App.
func (c Config) validatePublish() []error {
	var errs []error
	switch c.PublishMode() {
	case "local":
	case "github":
		if !c.GitHub.Enabled() {
			errs = append(errs, errors.New("publish.mode github needs github.token or github.app_id"))
		}
	case "gitlab":
		if !c.GitLab.Enabled() {
			errs = append(errs, errors.New("publish.mode gitlab needs gitlab.token"))
		}
	default:
		errs = append(errs, fmt.Errorf("publish.mode must be local, github or gitlab, got %q", c.Publish.Mode))
	}
	if c.GitHub.AppID != 0 && c.GitHub.PrivateKeyFile == "" {
		errs = append(errs, errors.New("github.app_id needs github.private_key_file"))
	}
	if c.GitHub.AppID == 0 && c.GitHub.PrivateKeyFile != "" {
		errs = append(errs, errors.New("github.private_key_file needs github.app_id"))
	}
	if c.GitHub.AppID != 0 && c.GitHub.Token != "" {
		errs = append(errs, errors.New("github.token and github.app_id are both set: choose one"))
	}
	if c.Checkouts.MaxMirrorBytes < 0 {
		errs = append(errs, fmt.Errorf("checkouts.max_mirror_bytes must not be negative, got %d", c.Checkouts.MaxMirrorBytes))
	}
	return errs
}

// validate checks the sandbox settings.
func (s Sandbox) validate() []error {
	var errs []error
	switch s.Mode {
	case "auto", "required", "off":
	default:
		errs = append(errs, fmt.Errorf("sandbox.mode must be auto, required or off, got %q", s.Mode))
	}
	if _, err := egress.ParseAllow(s.Registries...); err != nil {
		errs = append(errs, fmt.Errorf("sandbox.registries: %w", err))
	}
	if s.UID < 0 || s.GID < 0 {
		errs = append(errs, fmt.Errorf("sandbox.uid and sandbox.gid must not be negative, got %d and %d", s.UID, s.GID))
	}
	if s.GoCache != "per_repo" && s.GoCache != "shared" {
		errs = append(errs, fmt.Errorf("sandbox.go_cache must be per_repo or shared, got %q", s.GoCache))
	}
	if s.MemoryMB < 64 || s.TmpMB < 1 || s.FileSizeMB < 1 || s.CPUTime < time.Second {
		errs = append(errs, fmt.Errorf("sandbox limits too small to run anything: memory_mb %d (at least 64), tmp_mb %d, file_size_mb %d, cpu_time %s (at least 1s)",
			s.MemoryMB, s.TmpMB, s.FileSizeMB, s.CPUTime))
	}
	return errs
}

// nonEmpty counts the non-empty strings.
func nonEmpty(ss ...string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}
