package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKeepInterval(t *testing.T) {
	if d := Default().GitHub.KeepInterval; d != 30*time.Minute {
		t.Errorf("default keep interval %s, want 30m", d)
	}
	path := filepath.Join(t.TempDir(), "redfix.yaml")
	if err := os.WriteFile(path, []byte("github:\n  keep_interval: 2h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Load(path, env(nil)); err != nil || cfg.GitHub.KeepInterval != 2*time.Hour {
		t.Errorf("from the file: %v, %v", cfg.GitHub.KeepInterval, err)
	}
	if cfg, err := Load(path, env(map[string]string{"REDFIX_GITHUB_KEEP_INTERVAL": "0"})); err != nil || cfg.GitHub.KeepInterval != 0 {
		t.Errorf("turned off by the environment: %v, %v", cfg.GitHub.KeepInterval, err)
	}
	if _, err := Load("", env(map[string]string{"REDFIX_GITHUB_KEEP_INTERVAL": "10s"})); err == nil || !strings.Contains(err.Error(), "keep_interval") {
		t.Errorf("a 10s pass over the pull requests was accepted: %v", err)
	}
}
