package config

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Environment variables, each overriding one setting.
var envVars = []struct {
	name string
	set  func(c *Config, v string) error
}{
	{"REDFIX_DATA_DIR", func(c *Config, v string) error { c.DataDir = v; return nil }},
	{"REDFIX_STARTUP_WAIT", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a duration such as 15s, got %q", v)
		}
		c.StartupWait = d
		return nil
	}},
	{"REDFIX_LOG_LEVEL", func(c *Config, v string) error { c.Log.Level = v; return nil }},
	{"REDFIX_LOG_FORMAT", func(c *Config, v string) error { c.Log.Format = v; return nil }},
	{"REDFIX_HTTP_ADDR", func(c *Config, v string) error { c.HTTP.Addr = v; return nil }},
	{"REDFIX_WEBHOOK_SECRET", func(c *Config, v string) error { c.HTTP.WebhookSecret = v; return nil }},
	{"REDFIX_INGEST_TOKEN", func(c *Config, v string) error { c.HTTP.IngestToken = v; return nil }},
	{"REDFIX_ALLOW_REPOS", func(c *Config, v string) error { c.HTTP.AllowRepos = splitList(v); return nil }},
	{"REDFIX_READ_TOKEN", func(c *Config, v string) error { c.HTTP.ReadToken = v; return nil }},
	{"REDFIX_TRUSTED_USER_HEADER", func(c *Config, v string) error { c.HTTP.TrustedUserHeader = v; return nil }},
	{"REDFIX_READ_OPEN", boolVar(func(c *Config) *bool { return &c.HTTP.ReadOpen })},
	{"REDFIX_PUBLIC_WITHOUT_TOKEN", boolVar(func(c *Config) *bool { return &c.HTTP.PublicWithoutToken })},
	{"REDFIX_NATS_URL", func(c *Config, v string) error { c.NATS.URL = v; return nil }},
	{"REDFIX_NATS_USER", func(c *Config, v string) error { c.NATS.User = v; return nil }},
	{"REDFIX_NATS_PASSWORD", func(c *Config, v string) error { c.NATS.Password = v; return nil }},
	{"REDFIX_NATS_TOKEN", func(c *Config, v string) error { c.NATS.Token = v; return nil }},
	{"REDFIX_NATS_CREDENTIALS_FILE", func(c *Config, v string) error { c.NATS.CredentialsFile = v; return nil }},
	{"REDFIX_REDIS_ADDR", func(c *Config, v string) error { c.Redis.Addr = v; return nil }},
	{"REDFIX_REDIS_PASSWORD", func(c *Config, v string) error { c.Redis.Password = v; return nil }},
	{"REDFIX_REDIS_SENTINEL_PASSWORD", func(c *Config, v string) error { c.Redis.Sentinel.Password = v; return nil }},
	// A cluster's servers from the environment replace the file's single
	// server (a deployment's manifests choose the form).
	{"REDFIX_NATS_URLS", func(c *Config, v string) error { c.NATS.URL, c.NATS.URLs = "", splitList(v); return nil }},
	{"REDFIX_NATS_REPLICAS", intVar(func(c *Config) *int { return &c.NATS.Replicas })},
	{"REDFIX_REDIS_SENTINEL_MASTER", func(c *Config, v string) error { c.Redis.Addr, c.Redis.Sentinel.Master = "", v; return nil }},
	{"REDFIX_REDIS_SENTINEL_ADDRS", func(c *Config, v string) error { c.Redis.Addr, c.Redis.Sentinel.Addrs = "", splitList(v); return nil }},
	{"REDFIX_REDIS_WAIT_REPLICAS", intVar(func(c *Config) *int { return &c.Redis.WaitReplicas })},
	{"REDFIX_REDIS_TASK_RETENTION", durationVar(func(c *Config) *time.Duration { return &c.Redis.TaskRetention })},
	{"REDFIX_REDIS_RETENTION_SWEEP_INTERVAL", durationVar(func(c *Config) *time.Duration { return &c.Redis.RetentionSweepInterval })},
	{"REDFIX_LLM_BASE_URL", func(c *Config, v string) error { c.LLM.BaseURL = v; return nil }},
	{"REDFIX_LLM_API_KEY", func(c *Config, v string) error { c.LLM.APIKey = v; return nil }},
	{"REDFIX_MODEL", func(c *Config, v string) error { c.LLM.Model = v; return nil }},
	{"REDFIX_TRIAGE_RERUNS", intVar(func(c *Config) *int { return &c.Triage.Reruns })},
	{"REDFIX_TRIAGE_DAILY_JOBS", intVar(func(c *Config) *int { return &c.Triage.DailyJobs })},
	{"REDFIX_TRIAGE_MAX_GROUPS_PER_REPORT", intVar(func(c *Config) *int { return &c.Triage.MaxGroupsPerReport })},
	{"REDFIX_MAX_STEPS", intVar(func(c *Config) *int { return &c.Harness.MaxSteps })},
	{"REDFIX_WORKER_SLOTS", intVar(func(c *Config) *int { return &c.Worker.Slots })},
	{"REDFIX_WORKER_MEMORY_LIMIT_MB", intVar(func(c *Config) *int { return &c.Worker.MemoryLimitMB })},
	{"REDFIX_WORKER_METRICS_ADDR", func(c *Config, v string) error { c.Worker.MetricsAddr = v; return nil }},
	{"REDFIX_PUBLISH_DIR", func(c *Config, v string) error { c.Publish.Dir = v; return nil }},
	{"REDFIX_PUBLISH_MODE", func(c *Config, v string) error { c.Publish.Mode = v; return nil }},
	{"REDFIX_GITHUB_API_URL", func(c *Config, v string) error { c.GitHub.APIURL = v; return nil }},
	{"REDFIX_GITHUB_TOKEN", func(c *Config, v string) error { c.GitHub.Token = v; return nil }},
	{"REDFIX_GITHUB_APP_ID", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("want the app's numeric id, got %q", v)
		}
		c.GitHub.AppID = n
		return nil
	}},
	{"REDFIX_GITHUB_PRIVATE_KEY_FILE", func(c *Config, v string) error { c.GitHub.PrivateKeyFile = v; return nil }},
	{"REDFIX_GITHUB_ALLOW", func(c *Config, v string) error { c.GitHub.Allow = commaList(v); return nil }},
	{"REDFIX_GITHUB_FORKS", boolVar(func(c *Config) *bool { return &c.GitHub.Forks })},
	{"REDFIX_GITHUB_RESYNC_INTERVAL", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a duration such as 10m, got %q", v)
		}
		c.GitHub.ResyncInterval = d
		return nil
	}},
	{"REDFIX_GITHUB_KEEP_INTERVAL", durationVar(func(c *Config) *time.Duration { return &c.GitHub.KeepInterval })},
	{"REDFIX_GITLAB_URL", func(c *Config, v string) error { c.GitLab.URL = v; return nil }},
	{"REDFIX_GITLAB_TOKEN", func(c *Config, v string) error { c.GitLab.Token = v; return nil }},
	{"REDFIX_GITLAB_WEBHOOK_SECRET", func(c *Config, v string) error { c.GitLab.WebhookSecret = v; return nil }},
	{"REDFIX_GITLAB_ALLOW", func(c *Config, v string) error { c.GitLab.Allow = commaList(v); return nil }},
	{"REDFIX_GITLAB_FORKS", boolVar(func(c *Config) *bool { return &c.GitLab.Forks })},
	{"REDFIX_GITLAB_RESYNC_INTERVAL", durationVar(func(c *Config) *time.Duration { return &c.GitLab.ResyncInterval })},
	{"REDFIX_PYTHON", func(c *Config, v string) error { c.Languages.Python.Interpreter = v; return nil }},
	{"REDFIX_PYTHON_INDEX_URL", func(c *Config, v string) error { c.Languages.Python.IndexURL = v; return nil }},
	{"REDFIX_PYTHON_ALLOW_SDISTS", boolVar(func(c *Config) *bool { return &c.Languages.Python.AllowSdists })},
	{"REDFIX_NODE", func(c *Config, v string) error { c.Languages.Node.Node = v; return nil }},
	{"REDFIX_NODE_CACHE_DIR", func(c *Config, v string) error { c.Languages.Node.CacheDir = v; return nil }},
	{"REDFIX_NODE_REGISTRY", func(c *Config, v string) error { c.Languages.Node.Registry = v; return nil }},
	{"REDFIX_NODE_INSTALL_SCRIPTS", boolVar(func(c *Config) *bool { return &c.Languages.Node.InstallScripts })},
	{"REDFIX_NODE_SETUP_TIMEOUT", durationVar(func(c *Config) *time.Duration { return &c.Languages.Node.SetupTimeout })},
	{"REDFIX_SANDBOX", func(c *Config, v string) error { c.Sandbox.Mode = v; return nil }},
	{"REDFIX_SANDBOX_NETWORK", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.Sandbox.Network = b
		return nil
	}},
	{"REDFIX_SANDBOX_REGISTRIES", func(c *Config, v string) error {
		c.Sandbox.Registries = nil
		for _, r := range strings.Split(v, ",") {
			if r = strings.TrimSpace(r); r != "" {
				c.Sandbox.Registries = append(c.Sandbox.Registries, r)
			}
		}
		return nil
	}},
	{"REDFIX_SANDBOX_UID", intVar(func(c *Config) *int { return &c.Sandbox.UID })},
	{"REDFIX_SANDBOX_GID", intVar(func(c *Config) *int { return &c.Sandbox.GID })},
	{"REDFIX_SANDBOX_GO_CACHE", func(c *Config, v string) error { c.Sandbox.GoCache = v; return nil }},
	{"REDFIX_SANDBOX_SEED_CACHE", func(c *Config, v string) error { c.Sandbox.SeedCache = v; return nil }},
	{"REDFIX_SANDBOX_MEMORY_MB", intVar(func(c *Config) *int { return &c.Sandbox.MemoryMB })},
	{"REDFIX_SANDBOX_CPU_TIME", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a duration like 10m, got %q", v)
		}
		c.Sandbox.CPUTime = d
		return nil
	}},
}

// secretVars are the environment variables that carry secrets. Each has a
// NAME_FILE variant naming a file that holds the value (a mounted secret),
// so that the value is in no process's environment.
var secretVars = map[string]bool{
	"REDFIX_WEBHOOK_SECRET": true, "REDFIX_INGEST_TOKEN": true, "REDFIX_REDIS_PASSWORD": true, "REDFIX_REDIS_SENTINEL_PASSWORD": true,
	"REDFIX_NATS_PASSWORD": true, "REDFIX_NATS_TOKEN": true,
	"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "REDFIX_LLM_API_KEY": true, "REDFIX_GITHUB_TOKEN": true,
	"REDFIX_GITLAB_TOKEN": true, "REDFIX_GITLAB_WEBHOOK_SECRET": true,
}

// Secrets are the values of every configured credential: what redaction
// must never let out.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range []string{c.HTTP.IngestToken, c.HTTP.WebhookSecret, c.LLM.APIKey, c.Redis.Password, c.Redis.Sentinel.Password, urlPassword(c.NATS.URL), c.NATS.Password, c.NATS.Token, c.GitHub.Token, c.GitLab.Token, c.GitLab.WebhookSecret} {
		if s != "" {
			out = append(out, s)
		}
	}
	out = append(out, c.gitRemoteSecrets()...)
	return out
}

// urlPassword is the password in a URL's user information, if any.
func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

func intVar(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", v)
		}
		*field(c) = n
		return nil
	}
}

func applyEnv(cfg *Config, getenv func(string) string) error {
	if getenv == nil {
		return nil
	}
	if err := applyModelEnv(cfg, getenv); err != nil {
		return err
	}
	for _, e := range envVars {
		v, err := lookup(cfg, getenv, e.name)
		if err != nil {
			return err
		}
		if v == "" {
			continue
		}
		if err := e.set(cfg, v); err != nil {
			return fmt.Errorf("environment %s: %w", e.name, err)
		}
	}
	return nil
}

// lookup is the variable name's value, read from the file NAME_FILE names
// for a secret (recorded in cfg.SecretFiles).
func lookup(cfg *Config, getenv func(string) string, name string) (string, error) {
	v := getenv(name)
	if !secretVars[name] {
		return v, nil
	}
	file := getenv(name + "_FILE")
	if file == "" {
		return v, nil
	}
	if v != "" {
		return "", fmt.Errorf("environment: set %s or %s_FILE, not both", name, name)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("environment %s_FILE: %w", name, err)
	}
	v = strings.TrimRight(string(data), "\r\n")
	if v == "" {
		return "", fmt.Errorf("environment %s_FILE: %s is empty", name, file)
	}
	if !slices.Contains(cfg.SecretFiles, file) {
		cfg.SecretFiles = append(cfg.SecretFiles, file)
	}
	return v, nil
}
