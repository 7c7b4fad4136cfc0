package config

import (
	"strings"
	"testing"
	"time"
)

func TestProviderKeys(t *testing.T) {
	both := map[string]string{"REDFIX_MODEL": "m", "OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}
	cfg, err := Load("", env(both))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLM.Provider != "openai" || cfg.LLM.APIKey != "sk-openai" {
		t.Errorf("openai: provider %q key %q", cfg.LLM.Provider, cfg.LLM.APIKey)
	}
	both["REDFIX_LLM_PROVIDER"] = "anthropic"
	if cfg, err = Load("", env(both)); err != nil {
		t.Fatal(err)
	}
	if cfg.LLM.Provider != "anthropic" || cfg.LLM.APIKey != "sk-ant" {
		t.Errorf("anthropic: provider %q key %q, want ANTHROPIC_API_KEY and never the OpenAI key", cfg.LLM.Provider, cfg.LLM.APIKey)
	}
	both["REDFIX_LLM_API_KEY"] = "sk-explicit"
	if cfg, _ = Load("", env(both)); cfg.LLM.APIKey != "sk-explicit" {
		t.Errorf("REDFIX_LLM_API_KEY should win, got %q", cfg.LLM.APIKey)
	}
	_, err = Load("", env(map[string]string{"REDFIX_MODEL": "m", "REDFIX_LLM_PROVIDER": "anthropic", "OPENAI_API_KEY": "sk-openai"}))
	if err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("anthropic with only an OpenAI key: err = %v", err)
	}
	for name, e := range map[string]map[string]string{
		"provider":             {"REDFIX_LLM_PROVIDER": "gemini"},
		"tool_format":          {"REDFIX_LLM_TOOL_FORMAT": "xml"},
		"samples":              {"REDFIX_SAMPLES": "0"},
		"REDFIX_MAX_WALL_TIME": {"REDFIX_MAX_WALL_TIME": "soon"},
	} {
		if _, err := Load("", env(e)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: err = %v, want one naming %s", e, err, name)
		}
	}
	cfg, err = Load("", env(map[string]string{"REDFIX_MAX_COST_USD": "2.5", "REDFIX_MAX_WALL_TIME": "20m", "REDFIX_SAMPLES": "3",
		"REDFIX_REPO_DAILY_MAX_TOKENS": "2000000", "REDFIX_REPO_DAILY_MAX_COST_USD": "40"}))
	if err != nil || cfg.Harness.MaxCostUSD != 2.5 || cfg.Harness.MaxWall != 20*time.Minute || cfg.Harness.Samples != 3 ||
		cfg.Harness.RepoDailyMaxTokens != 2000000 || cfg.Harness.RepoDailyMaxCostUSD != 40 {
		t.Errorf("budgets from the environment: %+v, %v", cfg.Harness, err)
	}
	for _, e := range []map[string]string{{"REDFIX_REPO_DAILY_MAX_COST_USD": "-1"}, {"REDFIX_REPO_DAILY_MAX_TOKENS": "-5"}} {
		if _, err := Load("", env(e)); err == nil || !strings.Contains(err.Error(), "budgets") {
			t.Errorf("%v: err = %v, want a budget error", e, err)
		}
	}
	if _, err := Load("", env(map[string]string{"REDFIX_REPO_DAILY_MAX_TOKENS": "lots"})); err == nil || !strings.Contains(err.Error(), "REDFIX_REPO_DAILY_MAX_TOKENS") {
		t.Errorf("a malformed daily budget: %v", err)
	}
}
