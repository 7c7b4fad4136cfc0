package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
)

// A one-shot command gets a private directory of its own for the run under
// the private data directory (an open data directory is closed first); the
// build caches and mirrors stay shared; the run's directory goes with it.
func TestOneShotRunDirIsPrivate(t *testing.T) {
	log := zaptest.NewLogger(t)
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for range 2 {
		cfg := Default()
		cfg.DataDir = data
		cleanup, err := cfg.RunDir("triage-", log)
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		if !strings.HasPrefix(cfg.DataDir, filepath.Join(data, "runs", "triage-")) {
			t.Errorf("run directory %s, want one under %s", cfg.DataDir, filepath.Join(data, "runs"))
		}
		if cfg.Sandbox.CacheDir != filepath.Join(data, "cache") || cfg.Checkouts.MirrorDir != filepath.Join(data, "mirrors") {
			t.Errorf("caches %s and mirrors %s, want them shared in %s", cfg.Sandbox.CacheDir, cfg.Checkouts.MirrorDir, data)
		}
		dirs = append(dirs, cfg.DataDir)
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two runs share %s", dirs[0])
	}
	for _, d := range append([]string{data, filepath.Join(data, "runs")}, dirs...) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if p := fi.Mode().Perm(); p != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, p)
		}
	}

	cfg := Default()
	cfg.DataDir = data
	cleanup, err := cfg.RunDir("repair-", log)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if _, err := os.Stat(cfg.DataDir); !os.IsNotExist(err) {
		t.Errorf("the run's directory is left after cleanup: %v", err)
	}
}

// A data directory that is a link is refused before anything runs.
func TestOneShotRefusesUnsafeDataDir(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cfg := Default()
	cfg.DataDir = link
	if _, err := cfg.RunDir("bench-", zaptest.NewLogger(t)); err == nil || !strings.Contains(err.Error(), "not private") {
		t.Fatalf("RunDir on a link: %v, want it refused", err)
	}
}
