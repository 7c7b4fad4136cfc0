package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultsNeedNothing(t *testing.T) {
	cfg, err := Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLM.Enabled() || cfg.NATS.URL != "" || cfg.Redis.Addr != "" {
		t.Fatalf("defaults should be the embedded, offline setup: %+v", cfg)
	}
	if cfg.Validators.OracleRuns != 3 || cfg.Triage.Reruns != 5 || cfg.Triage.MaxGroupsPerReport != 20 {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestFileThenEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redfix.yaml")
	yaml := "nats:\n  url: nats://file:4222\n  ack_wait: 30s\nllm:\n  model: from-file\n  base_url: http://llm:8000/v1\ntriage:\n  reruns: 7\n  daily_jobs: 20\n  daily_jobs_by_repo:\n    https://github.com/acme/big: 100\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, env(map[string]string{"REDFIX_MODEL": "from-env", "REDFIX_REDIS_ADDR": "redis:6379", "REDFIX_TRIAGE_MAX_GROUPS_PER_REPORT": "50"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NATS.URL != "nats://file:4222" || cfg.NATS.AckWait != 30*time.Second || cfg.Triage.Reruns != 7 {
		t.Fatalf("file values lost: %+v", cfg)
	}
	if cfg.LLM.Model != "from-env" || cfg.Redis.Addr != "redis:6379" || !cfg.LLM.Enabled() {
		t.Fatalf("environment did not override: %+v", cfg)
	}
	if cfg.Harness.MaxSteps != 40 {
		t.Fatalf("a default the file does not name was lost: %d", cfg.Harness.MaxSteps)
	}
	if cfg.Triage.DailyJobs != 20 || cfg.Triage.DailyJobsByRepo["https://github.com/acme/big"] != 100 {
		t.Fatalf("daily job budgets: %d %v", cfg.Triage.DailyJobs, cfg.Triage.DailyJobsByRepo)
	}
	if cfg.Triage.MaxGroupsPerReport != 50 {
		t.Fatalf("groups per report from the environment: %d", cfg.Triage.MaxGroupsPerReport)
	}
	if cfg.StartupWait != 15*time.Second {
		t.Fatalf("startup wait default %s, want 15s", cfg.StartupWait)
	}
	cfg, err = Load(path, env(map[string]string{"REDFIX_STARTUP_WAIT": "1m"}))
	if err != nil || cfg.StartupWait != time.Minute {
		t.Fatalf("startup wait from the environment: %s, %v", cfg.StartupWait, err)
	}
	if cfg.Redis.TaskRetention != 90*24*time.Hour || cfg.Redis.RetentionSweepInterval != time.Hour {
		t.Fatalf("retention defaults: %s every %s, want 90 days every hour", cfg.Redis.TaskRetention, cfg.Redis.RetentionSweepInterval)
	}
	cfg, err = Load(path, env(map[string]string{"REDFIX_REDIS_TASK_RETENTION": "720h", "REDFIX_REDIS_RETENTION_SWEEP_INTERVAL": "10m"}))
	if err != nil || cfg.Redis.TaskRetention != 30*24*time.Hour || cfg.Redis.RetentionSweepInterval != 10*time.Minute {
		t.Fatalf("retention from the environment: %s every %s, %v", cfg.Redis.TaskRetention, cfg.Redis.RetentionSweepInterval, err)
	}
	retain := filepath.Join(t.TempDir(), "retain.yaml")
	if err := os.WriteFile(retain, []byte("redis:\n  task_retention: 0s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(retain, env(nil)); err != nil || cfg.Redis.TaskRetention != 0 {
		t.Fatalf("task_retention 0 (forever) from the file: %s, %v", cfg.Redis.TaskRetention, err)
	}
}

func TestRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		yaml string
		env  map[string]string
		want string
	}{
		"unknown key":                {yaml: "nats:\n  ulr: x\n", want: "ulr"},
		"bad number env":             {env: map[string]string{"REDFIX_TRIAGE_RERUNS": "many"}, want: "REDFIX_TRIAGE_RERUNS"},
		"zero reruns":                {yaml: "triage:\n  reruns: 0\n", want: "triage.reruns"},
		"negative budget":            {env: map[string]string{"REDFIX_TRIAGE_DAILY_JOBS": "-1"}, want: "triage.daily_jobs"},
		"negative repo budget":       {yaml: "triage:\n  daily_jobs_by_repo:\n    x: -2\n", want: "triage.daily_jobs_by_repo[x]"},
		"no groups per report":       {yaml: "triage:\n  max_groups_per_report: 0\n", want: "triage.max_groups_per_report"},
		"model no url":               {env: map[string]string{"REDFIX_MODEL": "m"}, want: "llm.model"},
		"app id no key":              {env: map[string]string{"REDFIX_GITHUB_APP_ID": "12"}, want: "github.app_id"},
		"bad app id":                 {env: map[string]string{"REDFIX_GITHUB_APP_ID": "twelve"}, want: "REDFIX_GITHUB_APP_ID"},
		"key no app id":              {env: map[string]string{"REDFIX_GITHUB_PRIVATE_KEY_FILE": "/k.pem"}, want: "github.private_key_file"},
		"github mode no credentials": {yaml: "publish:\n  mode: github\n", want: "publish.mode github"},
		"unknown mode":               {yaml: "publish:\n  mode: gitea\n", want: "publish.mode"},
		"gitlab mode no token":       {yaml: "publish:\n  mode: gitlab\n", want: "publish.mode gitlab"},
		"gitlab url without scheme":  {env: map[string]string{"REDFIX_GITLAB_URL": "gitlab.example"}, want: "gitlab.url"},
		"gitlab url with api path":   {env: map[string]string{"REDFIX_GITLAB_URL": "https://gitlab.example/api/v4"}, want: "without /api/v4"},
		"gitlab url with a password": {env: map[string]string{"REDFIX_GITLAB_URL": "https://bot:pw@gitlab.example"}, want: "credentials"},
		"gitlab url with a query":    {env: map[string]string{"REDFIX_GITLAB_URL": "https://gitlab.example/?x=1"}, want: "query"},
		"gitlab secret no token":     {env: map[string]string{"REDFIX_GITLAB_WEBHOOK_SECRET": "s"}, want: "gitlab.webhook_secret needs gitlab.token"},
		"gitlab bad project":         {yaml: "gitlab:\n  token: t\n  projects:\n    - name: ledger\n", want: "gitlab.projects"},
		"gitlab resync too often":    {env: map[string]string{"REDFIX_GITLAB_TOKEN": "t", "REDFIX_GITLAB_RESYNC_INTERVAL": "1s"}, want: "gitlab.resync_interval"},
		"gitlab unknown key":         {yaml: "gitlab:\n  tokn: t\n", want: "tokn"},
		"negative startup wait":      {yaml: "startup_wait: -1s\n", want: "startup_wait"},
		"bad startup wait env":       {env: map[string]string{"REDFIX_STARTUP_WAIT": "soon"}, want: "REDFIX_STARTUP_WAIT"},
		"negative retention":         {yaml: "redis:\n  task_retention: -1h\n", want: "redis.task_retention"},
		"retention in days":          {env: map[string]string{"REDFIX_REDIS_TASK_RETENTION": "90d"}, want: "REDFIX_REDIS_TASK_RETENTION"},
		"no sweep interval":          {yaml: "redis:\n  retention_sweep_interval: 0s\n", want: "redis.retention_sweep_interval"},
		"read open and a read token": {yaml: "http:\n  read_open: true\n", env: map[string]string{"REDFIX_READ_TOKEN": "r"}, want: "http.read_open"},
		"bad read open env":          {env: map[string]string{"REDFIX_READ_OPEN": "maybe"}, want: "REDFIX_READ_OPEN"},
	} {
		t.Run(name, func(t *testing.T) {
			path := ""
			if c.yaml != "" {
				path = filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".yaml")
				if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(path, env(c.env))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), env(nil)); err == nil {
		t.Fatal("a missing file was accepted")
	}
}

func TestGitHubSettings(t *testing.T) {
	cfg, err := Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublishMode() != "local" || cfg.GitHub.Enabled() || cfg.GitHub.APIURL != "https://api.github.com/" {
		t.Fatalf("with nothing configured: mode %q, github %+v", cfg.PublishMode(), cfg.GitHub)
	}
	cfg, err = Load("", env(map[string]string{
		"REDFIX_GITHUB_API_URL":          "https://ghe.example/api/v3/",
		"REDFIX_GITHUB_APP_ID":           "42",
		"REDFIX_GITHUB_PRIVATE_KEY_FILE": "/secrets/app.pem",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GitHub.AppID != 42 || cfg.GitHub.PrivateKeyFile != "/secrets/app.pem" || cfg.GitHub.APIURL != "https://ghe.example/api/v3/" {
		t.Fatalf("github from the environment: %+v", cfg.GitHub)
	}
	if cfg.PublishMode() != "github" {
		t.Fatalf("an app configured: publish mode %q, want github", cfg.PublishMode())
	}
	cfg, err = Load("", env(map[string]string{"REDFIX_GITHUB_TOKEN": "t", "REDFIX_PUBLISH_MODE": "local"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PublishMode() != "local" {
		t.Fatalf("an explicit local mode was overridden: %q", cfg.PublishMode())
	}
}

// TestGitLabSettings: GitLab is configured by a token, with gitlab.com
// unless a URL names another instance; its secrets come from files too
// and are among the secrets redaction hides; a forge's publish mode follows.
func TestGitLabSettings(t *testing.T) {
	cfg, err := Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GitLab.Enabled() || cfg.GitLab.URL != "https://gitlab.com" || cfg.GitLab.ResyncInterval != 10*time.Minute || cfg.GitLab.Forks {
		t.Fatalf("with nothing configured: %+v", cfg.GitLab)
	}
	dir := t.TempDir()
	write := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yaml := filepath.Join(dir, "redfix.yaml")
	if err := os.WriteFile(yaml, []byte("gitlab:\n  projects:\n    - name: acme/payments/**\n      branches: [main, release-*]\n      merge_requests: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(yaml, env(map[string]string{
		"REDFIX_GITLAB_URL":                 "https://git.example.com/gitlab",
		"REDFIX_GITLAB_TOKEN_FILE":          write("token", "glpat-from-file\n"),
		"REDFIX_GITLAB_WEBHOOK_SECRET_FILE": write("secret", "hook-from-file"),
		"REDFIX_GITLAB_ALLOW":               "acme/*, acme/payments/**",
		"REDFIX_GITLAB_FORKS":               "true",
	}))
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.GitLab
	if !g.Enabled() || g.URL != "https://git.example.com/gitlab" || g.Token != "glpat-from-file" || g.WebhookSecret != "hook-from-file" || len(g.Allow) != 2 || !g.Forks {
		t.Fatalf("gitlab from the environment: %+v", g)
	}
	if len(g.Projects) != 1 || !g.Projects[0].MergeRequests || len(g.Projects[0].Branches) != 2 {
		t.Errorf("gitlab projects from the file: %+v", g.Projects)
	}
	got := strings.Join(cfg.Secrets(), " ")
	for _, want := range []string{"glpat-from-file", "hook-from-file"} {
		if !strings.Contains(got, want) {
			t.Errorf("Secrets() lacks %s", want)
		}
	}
	if len(cfg.SecretFiles) != 2 {
		t.Errorf("secret files recorded: %v", cfg.SecretFiles)
	}
	if cfg.PublishMode() != "gitlab" {
		t.Errorf("GitLab configured alone: publish mode %q, want gitlab", cfg.PublishMode())
	}
	if both, err := Load("", env(map[string]string{"REDFIX_GITLAB_TOKEN": "t", "REDFIX_GITHUB_TOKEN": "g"})); err != nil || both.PublishMode() != "github" {
		t.Errorf("both forges: publish mode %q, %v; want github (fixes go to each repository's forge)", both.PublishMode(), err)
	}
}

func TestGitHubEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redfix.yaml")
	yaml := "github:\n  repositories:\n    - name: acme/api\n      branches: [main, release-*]\n      artifacts: [test-results*]\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, env(map[string]string{"REDFIX_GITHUB_ALLOW": "acme/*, other/tool", "REDFIX_GITHUB_RESYNC_INTERVAL": "30m", "REDFIX_GITHUB_FORKS": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if Default().GitHub.Forks {
		t.Error("forks are handled by default")
	}
	e := cfg.GitHub.GitHubEvents
	if len(e.Allow) != 2 || e.Allow[1] != "other/tool" || e.ResyncInterval != 30*time.Minute || e.ResyncLookback != 24*time.Hour || !e.Forks {
		t.Errorf("github events: %+v", e)
	}
	if len(e.Repositories) != 1 || e.Repositories[0].Branches[1] != "release-*" || e.Repositories[0].Artifacts[0] != "test-results*" {
		t.Errorf("repositories: %+v", e.Repositories)
	}
	if _, err := Load("", env(map[string]string{"REDFIX_GITHUB_RESYNC_INTERVAL": "1s"})); err == nil || !strings.Contains(err.Error(), "resync_interval") {
		t.Errorf("a 1s resync was accepted: %v", err)
	}
}

func TestSecretsFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg, err := Load("", env(map[string]string{
		"REDFIX_INGEST_TOKEN_FILE":   write("ingest", "ingest-from-file\n"),
		"REDFIX_WEBHOOK_SECRET_FILE": write("webhook", "webhook-from-file"),
		"REDFIX_LLM_API_KEY_FILE":    write("llm", "sk-from-file\r\n"),
		"REDFIX_REDIS_PASSWORD_FILE": write("redis", "redis-from-file"),
		"REDFIX_NATS_URL":            "nats://bot:nats-pass-from-url@nats:4222",
		"REDFIX_GITHUB_TOKEN_FILE":   write("github", "ghp-from-file"),
		"REDFIX_MODEL":               "m",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.IngestToken != "ingest-from-file" || cfg.HTTP.WebhookSecret != "webhook-from-file" || cfg.LLM.APIKey != "sk-from-file" || cfg.Redis.Password != "redis-from-file" {
		t.Fatalf("secrets from files: %+v %+v %+v %+v", cfg.HTTP, cfg.LLM.APIKey, cfg.Redis.Password, cfg.SecretFiles)
	}
	if len(cfg.SecretFiles) != 5 {
		t.Fatalf("secret files recorded: %v", cfg.SecretFiles)
	}
	got := strings.Join(cfg.Secrets(), " ")
	for _, want := range []string{"ingest-from-file", "webhook-from-file", "sk-from-file", "redis-from-file", "nats-pass-from-url", "ghp-from-file"} {
		if !strings.Contains(got, want) {
			t.Errorf("Secrets() lacks %s: %v", want, got)
		}
	}

	openai, err := Load("", env(map[string]string{"OPENAI_API_KEY_FILE": write("openai", "sk-openai-file"), "REDFIX_MODEL": "m"}))
	if err != nil || openai.LLM.APIKey != "sk-openai-file" {
		t.Fatalf("OPENAI_API_KEY_FILE: %v %q", err, openai.LLM.APIKey)
	}
	anthropic, err := Load("", env(map[string]string{"ANTHROPIC_API_KEY_FILE": write("anthropic", "sk-ant-file"), "REDFIX_LLM_PROVIDER": "anthropic", "REDFIX_MODEL": "m"}))
	if err != nil || anthropic.LLM.APIKey != "sk-ant-file" || len(anthropic.SecretFiles) != 1 {
		t.Fatalf("ANTHROPIC_API_KEY_FILE: %v %q %v", err, anthropic.LLM.APIKey, anthropic.SecretFiles)
	}

	for name, e := range map[string]map[string]string{
		"both":    {"REDFIX_INGEST_TOKEN": "x", "REDFIX_INGEST_TOKEN_FILE": write("both", "y")},
		"missing": {"REDFIX_INGEST_TOKEN_FILE": filepath.Join(dir, "nope")},
		"empty":   {"REDFIX_INGEST_TOKEN_FILE": write("empty", "\n")},
	} {
		if _, err := Load("", env(e)); err == nil || !strings.Contains(err.Error(), "REDFIX_INGEST_TOKEN") {
			t.Errorf("%s: want an error naming the variable, got %v", name, err)
		}
	}
}

func TestSandboxSettings(t *testing.T) {
	cfg, err := Load("", env(map[string]string{"REDFIX_SANDBOX": "required", "REDFIX_SANDBOX_NETWORK": "true", "REDFIX_SANDBOX_MEMORY_MB": "2048", "REDFIX_SANDBOX_CPU_TIME": "90s"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sandbox.Mode != "required" || !cfg.Sandbox.Network || cfg.Sandbox.MemoryMB != 2048 || cfg.Sandbox.CPUTime != 90*time.Second {
		t.Fatalf("sandbox settings: %+v", cfg.Sandbox)
	}
	for _, bad := range []map[string]string{{"REDFIX_SANDBOX": "sometimes"}, {"REDFIX_SANDBOX_MEMORY_MB": "1"}, {"REDFIX_SANDBOX_NETWORK": "maybe"}} {
		if _, err := Load("", env(bad)); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

func TestWorkerMemoryLimit(t *testing.T) {
	cfg, err := Load("", env(nil))
	if err != nil || cfg.Worker.MemoryLimitMB != DefaultWorkerMemoryLimitMB {
		t.Fatalf("default worker.memory_limit_mb = %d, %v; want %d", cfg.Worker.MemoryLimitMB, err, DefaultWorkerMemoryLimitMB)
	}
	path := filepath.Join(t.TempDir(), "redfix.yaml")
	if err := os.WriteFile(path, []byte("worker:\n  memory_limit_mb: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(path, env(nil)); err != nil || cfg.Worker.MemoryLimitMB != 0 {
		t.Fatalf("memory_limit_mb 0 (none) from the file: %d, %v", cfg.Worker.MemoryLimitMB, err)
	}
	if cfg, err = Load(path, env(map[string]string{"REDFIX_WORKER_MEMORY_LIMIT_MB": "3072"})); err != nil || cfg.Worker.MemoryLimitMB != 3072 {
		t.Fatalf("REDFIX_WORKER_MEMORY_LIMIT_MB=3072 over the file: %d, %v", cfg.Worker.MemoryLimitMB, err)
	}
	for _, bad := range []string{"-1", "10", "lots"} {
		_, err := Load("", env(map[string]string{"REDFIX_WORKER_MEMORY_LIMIT_MB": bad}))
		if err == nil || !strings.Contains(err.Error(), "MEMORY_LIMIT_MB") && !strings.Contains(err.Error(), "worker.memory_limit_mb") {
			t.Errorf("REDFIX_WORKER_MEMORY_LIMIT_MB=%s: err = %v, want one naming the setting", bad, err)
		}
	}
}

func TestLanguages(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "redfix.yaml")
	if err := os.WriteFile(file, []byte("languages:\n  repos:\n    - pattern: acme/*\n      driver: python\n  python:\n    index_url: http://127.0.0.1:9/simple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(file, func(k string) string {
		if k == "REDFIX_PYTHON" {
			return "/opt/py/bin/python3"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Languages.Repos) != 1 || cfg.Languages.Repos[0] != (LanguageRepo{"acme/*", "python"}) {
		t.Errorf("repos = %+v", cfg.Languages.Repos)
	}
	if cfg.Languages.Python.IndexURL != "http://127.0.0.1:9/simple" || cfg.Languages.Python.Interpreter != "/opt/py/bin/python3" {
		t.Errorf("python = %+v", cfg.Languages.Python)
	}
	// Wheels only unless the operator allows source distributions, in the
	// file or the environment.
	if Default().Languages.Python.AllowSdists {
		t.Error("source distributions are allowed by default")
	}
	if err := os.WriteFile(file, []byte("languages:\n  python:\n    allow_sdists: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Load(file, env(nil)); err != nil || !cfg.Languages.Python.AllowSdists {
		t.Errorf("allow_sdists: true in the file: %+v, %v", cfg.Languages.Python, err)
	}
	if cfg, err := Load(file, env(map[string]string{"REDFIX_PYTHON_ALLOW_SDISTS": "false"})); err != nil || cfg.Languages.Python.AllowSdists {
		t.Errorf("REDFIX_PYTHON_ALLOW_SDISTS=false over the file: %+v, %v", cfg.Languages.Python, err)
	}
	if _, err := Load("", env(map[string]string{"REDFIX_PYTHON_ALLOW_SDISTS": "sometimes"})); err == nil || !strings.Contains(err.Error(), "REDFIX_PYTHON_ALLOW_SDISTS") {
		t.Errorf("REDFIX_PYTHON_ALLOW_SDISTS=sometimes: err = %v", err)
	}
	if err := os.WriteFile(file, []byte("languages:\n  python:\n    allow_sdists: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(file, env(nil)); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("allow_sdists: sometimes: err = %v", err)
	}
	if err := os.WriteFile(file, []byte("languages:\n  repos:\n    - pattern: acme/*\n      driver: cobol\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(file, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "languages.repos[0].driver must be go, python or node") {
		t.Errorf("an unknown driver: err = %v", err)
	}
}

func TestLanguagesNode(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "redfix.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("languages:\n  repos:\n    - pattern: acme/web-*\n      driver: node\n  node:\n    cache_dir: /var/cache/redfix-node\n    registry: https://artifacts.example/api/npm/remote/\n    setup_timeout: 4m\n    check_timeout: 3m\n")
	cfg, err := Load(file, env(map[string]string{"REDFIX_NODE": "/opt/node20/bin/node", "REDFIX_NODE_INSTALL_SCRIPTS": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Languages.Repos) != 1 || cfg.Languages.Repos[0] != (LanguageRepo{"acme/web-*", "node"}) {
		t.Errorf("repos = %+v", cfg.Languages.Repos)
	}
	want := Node{Node: "/opt/node20/bin/node", CacheDir: "/var/cache/redfix-node", Registry: "https://artifacts.example/api/npm/remote/", InstallScripts: true, SetupTimeout: 4 * time.Minute, CheckTimeout: 3 * time.Minute}
	if cfg.Languages.Node != want {
		t.Errorf("node = %+v, want %+v", cfg.Languages.Node, want)
	}
	// The default runs no package's install scripts.
	if d := Default(); d.Languages.Node != (Node{}) {
		t.Errorf("default node settings = %+v", d.Languages.Node)
	}
	// The environment overrides the file.
	cfg, err = Load(file, env(map[string]string{"REDFIX_NODE_CACHE_DIR": "/tmp/nc", "REDFIX_NODE_SETUP_TIMEOUT": "90s", "REDFIX_NODE_REGISTRY": "http://127.0.0.1:4873/"}))
	if err != nil {
		t.Fatal(err)
	}
	if n := cfg.Languages.Node; n.CacheDir != "/tmp/nc" || n.SetupTimeout != 90*time.Second || n.Registry != "http://127.0.0.1:4873/" {
		t.Errorf("node from the environment = %+v", n)
	}

	for _, c := range []struct{ yaml, want string }{
		{"languages:\n  node:\n    setup_timeout: -1s\n", "languages.node.setup_timeout must not be negative"},
		{"languages:\n  node:\n    check_timeout: -1s\n", "languages.node.check_timeout must not be negative"},
		{"languages:\n  node:\n    install_script: true\n", "install_script"},
		{"languages:\n  node:\n    registry: artifacts.example/npm\n", "languages.node.registry must be an http or https URL"},
		{"languages:\n  node:\n    registry: https://user:token@artifacts.example/npm/\n", "languages.node.registry must be"},
		{"languages:\n  node:\n    registry: file:///srv/npm\n", "languages.node.registry must be"},
		{"languages:\n  node:\n    package_manager: pnpm\n", "package_manager"},
	} {
		write(c.yaml)
		if _, err := Load(file, env(nil)); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "token") {
			t.Errorf("%q: err = %v, want %q (and no credentials)", c.yaml, err, c.want)
		}
	}
	for _, bad := range []map[string]string{{"REDFIX_NODE_INSTALL_SCRIPTS": "sometimes"}, {"REDFIX_NODE_SETUP_TIMEOUT": "soon"}, {"REDFIX_NODE_SETUP_TIMEOUT": "-5s"}} {
		if _, err := Load("", env(bad)); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

// TestLanguagesTests: languages.tests gives repositories' test settings,
// checked as a repository's own file's are, the first match winning.
func TestLanguagesTests(t *testing.T) {
	file := filepath.Join(t.TempDir(), "redfix.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("languages:\n  tests:\n    - pattern: acme/luxon\n      env: {TZ: America/New_York}\n      locked: true\n    - pattern: acme/*\n      args: [--doctest-modules]\n      dependency_groups: [test]\n")
	cfg, err := Load(file, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := cfg.Languages.TestsFor("acme/luxon"); !ok || !got.Locked || got.String() != "env TZ=America/New_York" {
		t.Errorf("acme/luxon: %+v, %v", got, ok)
	}
	if got, ok := cfg.Languages.TestsFor("acme/x"); !ok || got.Locked || got.String() != "args --doctest-modules; dependency groups test" {
		t.Errorf("acme/x: %+v, %v", got, ok)
	}
	if _, ok := cfg.Languages.TestsFor("other/x"); ok {
		t.Error("other/x has test settings")
	}
	for _, c := range []struct{ yaml, want string }{
		{"languages:\n  tests:\n    - pattern: acme/*\n      env: {NPM_TOKEN: x}\n", "languages.tests[0].env: NPM_TOKEN looks like a credential's name"},
		{"languages:\n  tests:\n    - pattern: acme/*\n      env: {NODE_OPTIONS: --require=/x}\n", "languages.tests[0].env: NODE_OPTIONS (NODE_…) belongs to a tool"},
		{"languages:\n  tests:\n    - pattern: \"[\"\n", "languages.tests[0].pattern"},
		{"languages:\n  tests:\n    - pattern: acme/*\n      command: make test\n", "command"},
	} {
		write(c.yaml)
		if _, err := Load(file, env(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.yaml, err, c.want)
		}
	}
}
