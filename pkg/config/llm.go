package config

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// LLM configures the model behind the agent and the judge. An empty Model
// means no model: the offline policy repairs and the judge does not run.
type LLM struct {
	// Provider is "openai" (any OpenAI-compatible endpoint) or "anthropic".
	Provider string        `yaml:"provider"`
	BaseURL  string        `yaml:"base_url"`
	APIKey   string        `yaml:"api_key"`
	Model    string        `yaml:"model"`
	Timeout  time.Duration `yaml:"timeout"`
	// MaxRetries is how many times a 429, 5xx or transport failure is
	// retried, with backoff honouring Retry-After.
	MaxRetries int `yaml:"max_retries"`
	// ToolFormat is "native" (the provider's tool calls) or "text" (a ReAct
	// text format, for models served without tool calling).
	ToolFormat string `yaml:"tool_format"`
	// ContextWindow is the model's window in tokens; older observations are
	// condensed as a conversation nears it. 0: unknown, condensed only when
	// the server refuses a prompt as too long.
	ContextWindow int `yaml:"context_window"`
	// Prices are per model name, in US dollars per million tokens; a model
	// not listed costs 0 (its tokens are still counted).
	Prices map[string]Price `yaml:"prices"`
}

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input       float64 `yaml:"input"`
	CachedInput float64 `yaml:"cached_input"`
	CacheWrite  float64 `yaml:"cache_write"`
	Output      float64 `yaml:"output"`
}

// Enabled reports whether a model is configured.
func (l LLM) Enabled() bool { return l.Model != "" }

// modelEnvVars are the model's and the budgets' variables. An entry with a
// provider applies only when that provider is configured, so that a key
// meant for one provider never reaches another; they are applied before
// envVars, whose REDFIX_LLM_* names win.
var modelEnvVars = []struct {
	name     string
	provider string
	set      func(c *Config, v string) error
}{
	{"OPENAI_BASE_URL", "openai", func(c *Config, v string) error { c.LLM.BaseURL = v; return nil }},
	{"OPENAI_API_KEY", "openai", func(c *Config, v string) error { c.LLM.APIKey = v; return nil }},
	{"ANTHROPIC_BASE_URL", "anthropic", func(c *Config, v string) error { c.LLM.BaseURL = v; return nil }},
	{"ANTHROPIC_API_KEY", "anthropic", func(c *Config, v string) error { c.LLM.APIKey = v; return nil }},
	{"REDFIX_LLM_TOOL_FORMAT", "", func(c *Config, v string) error { c.LLM.ToolFormat = v; return nil }},
	{"REDFIX_LLM_CONTEXT_WINDOW", "", intVar(func(c *Config) *int { return &c.LLM.ContextWindow })},
	{"REDFIX_LLM_MAX_RETRIES", "", intVar(func(c *Config) *int { return &c.LLM.MaxRetries })},
	{"REDFIX_SAMPLES", "", intVar(func(c *Config) *int { return &c.Harness.Samples })},
	{"REDFIX_FEEDBACK_ROUNDS", "", intVar(func(c *Config) *int { return &c.Harness.FeedbackRounds })},
	{"REDFIX_MAX_TOKENS", "", intVar(func(c *Config) *int { return &c.Harness.MaxTokens })},
	{"REDFIX_MAX_COST_USD", "", floatVar(func(c *Config) *float64 { return &c.Harness.MaxCostUSD })},
	{"REDFIX_MAX_WALL_TIME", "", durationVar(func(c *Config) *time.Duration { return &c.Harness.MaxWall })},
	{"REDFIX_REPO_DAILY_MAX_TOKENS", "", intVar(func(c *Config) *int { return &c.Harness.RepoDailyMaxTokens })},
	{"REDFIX_REPO_DAILY_MAX_COST_USD", "", floatVar(func(c *Config) *float64 { return &c.Harness.RepoDailyMaxCostUSD })},
}

func applyModelEnv(cfg *Config, getenv func(string) string) error {
	if v := getenv("REDFIX_LLM_PROVIDER"); v != "" {
		cfg.LLM.Provider = v
	}
	for _, e := range modelEnvVars {
		if e.provider != "" && e.provider != cfg.LLM.Provider {
			continue
		}
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

func floatVar(field func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", v)
		}
		*field(c) = f
		return nil
	}
}

func durationVar(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a duration such as 20m, got %q", v)
		}
		*field(c) = d
		return nil
	}
}

// validateModel reports model and budget settings that cannot work.
func (c Config) validateModel() []error {
	var errs []error
	switch c.LLM.Provider {
	case "openai", "anthropic":
	default:
		errs = append(errs, fmt.Errorf("llm.provider must be openai or anthropic, got %q", c.LLM.Provider))
	}
	switch c.LLM.ToolFormat {
	case "native", "text":
	default:
		errs = append(errs, fmt.Errorf("llm.tool_format must be native or text, got %q", c.LLM.ToolFormat))
	}
	if c.LLM.Model != "" && c.LLM.BaseURL == "" && c.LLM.APIKey == "" {
		key := "OPENAI_API_KEY"
		if c.LLM.Provider == "anthropic" {
			key = "ANTHROPIC_API_KEY"
		}
		errs = append(errs, fmt.Errorf("llm.model is set but neither llm.base_url nor llm.api_key (or %s) is", key))
	}
	if c.LLM.MaxRetries < 0 || c.LLM.ContextWindow < 0 {
		errs = append(errs, errors.New("llm.max_retries and llm.context_window cannot be negative"))
	}
	if c.LLM.ContextWindow > 0 && c.LLM.ContextWindow < 4096 {
		errs = append(errs, fmt.Errorf("llm.context_window %d is too small to hold a task and a few steps (want at least 4096)", c.LLM.ContextWindow))
	}
	h := c.Harness
	if h.Samples < 1 {
		errs = append(errs, fmt.Errorf("harness.samples must be at least 1, got %d", h.Samples))
	}
	if h.FeedbackRounds < 0 || h.MaxTokens < 0 || h.MaxCostUSD < 0 || h.MaxWall < 0 || h.RepoDailyMaxTokens < 0 || h.RepoDailyMaxCostUSD < 0 {
		errs = append(errs, errors.New("harness budgets and feedback_rounds cannot be negative"))
	}
	if h.SampleTemperature < 0 || h.SampleTemperature > 2 {
		errs = append(errs, fmt.Errorf("harness.sample_temperature must be between 0 and 2, got %v", h.SampleTemperature))
	}
	return errs
}
