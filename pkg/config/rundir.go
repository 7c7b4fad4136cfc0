package config

import (
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"
)

// SecureDataDir makes the configured data directory private to this user
// (0700) with PrepareDataDir, closing one that others could read (and
// saying so in log), refusing one that is not this user's own.
func (c Config) SecureDataDir(log *zap.Logger) error {
	fixed, err := PrepareDataDir(c.DataDir)
	if err != nil {
		return err
	}
	if fixed {
		log.Warn("the data directory was open to other users: closed it to its owner (mode 0700)", zap.String("data_dir", c.DataDir))
	}
	return nil
}

// RunDir gives a one-shot command (triage, repair, bench, the demo) a
// directory of its own for this run, DATA_DIR/runs/PREFIX…, private like
// the data directory, and points c.DataDir at it: two commands run at
// once never share workspaces, results or pull requests. The build caches
// and the mirrors stay shared, in the data directory. cleanup removes the
// run's directory.
func (c *Config) RunDir(prefix string, log *zap.Logger) (cleanup func(), err error) {
	if err := c.SecureDataDir(log); err != nil {
		return nil, err
	}
	if c.Sandbox.CacheDir == "" {
		c.Sandbox.CacheDir = filepath.Join(c.DataDir, "cache")
	}
	if c.Checkouts.MirrorDir == "" {
		c.Checkouts.MirrorDir = filepath.Join(c.DataDir, "mirrors")
	}
	runs := filepath.Join(c.DataDir, "runs")
	if err := os.MkdirAll(runs, 0o700); err != nil {
		return nil, fmt.Errorf("make the runs' directory: %w", err)
	}
	dir, err := os.MkdirTemp(runs, prefix) // 0700
	if err != nil {
		return nil, fmt.Errorf("make this run's directory: %w", err)
	}
	c.RunOf, c.DataDir = c.DataDir, dir
	return func() { _ = os.RemoveAll(dir) }, nil
}
