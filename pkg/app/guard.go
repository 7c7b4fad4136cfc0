package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/workspace"
)

// This file wires, once for every command, what keeps a repository's code
// and the bot's secrets apart: the sandbox that every command run for a
// repository goes through, and the redaction of everything the outside
// world reads (logs, the store and so the JSON API, model prompts, pull
// requests and their trajectories).

// redactor removes the configured secrets and credential shapes.
func redactor(cfg config.Config) *redact.Redactor { return redact.New(cfg.Secrets()...) }

// logger is the process's logger, writing to w, redacted.
func logger(cfg config.Config, w io.Writer) (*zap.Logger, error) {
	r := redactor(cfg)
	return cfg.Log.Build(w, func(c zapcore.Core) zapcore.Core { return redact.Core(c, r) })
}

// confine builds the sandbox the configuration asks for and returns ctx
// carrying it, so that every command run below ctx on a repository's
// behalf is confined. Where the host cannot confine it says so loudly; in
// mode "required" it refuses to go on.
func confine(ctx context.Context, cfg config.Config, log *zap.Logger) (context.Context, sandbox.Status, error) {
	// Every command that runs a repository's commands comes here first:
	// the data directory it keeps their checkouts and caches in is private.
	if err := cfg.SecureDataDir(log); err != nil {
		return ctx, sandbox.Status{}, err
	}
	sc := cfg.Sandbox
	cache := sc.CacheDir
	if cache == "" {
		cache = filepath.Join(cfg.DataDir, "cache")
	}
	// Relative paths (`--config redfix.yaml`) are made absolute by
	// sandbox.New, from this working directory.
	// A run's data directory is hidden inside its data directory's: the
	// commands see neither, and reach the caches through a directory of the
	// sandbox's own, whatever modes the host's directories above them have.
	hide := append([]string{cfg.RunOf, cfg.DataDir, cfg.Publish.Dir, cfg.File, cfg.GitHub.PrivateKeyFile, cfg.NATS.CredentialsFile, cfg.Checkouts.MirrorDir}, cfg.SecretFiles...)
	box, err := sandbox.New(ctx, sandbox.Config{
		Mode:         sc.Mode,
		Network:      sc.Network,
		NetworkRepos: sc.NetworkRepos,
		Registries:   sc.Registries,
		UID:          sc.UID,
		GID:          sc.GID,
		Memory:       int64(sc.MemoryMB) << 20,
		CPUTime:      sc.CPUTime,
		FileSize:     int64(sc.FileSizeMB) << 20,
		TmpSize:      int64(sc.TmpMB) << 20,
		CacheDir:     cache,
		SharedCache:  sc.GoCache == "shared",
		SeedCache:    sc.SeedCache,
		Hide:         hide,
	})
	if err != nil {
		return ctx, sandbox.Status{}, fmt.Errorf("sandbox: %w", err)
	}
	st := box.Status()
	if st.Confined {
		log.Info("sandbox ready", zap.String("sandbox", st.String()))
	} else {
		log.Warn("UNCONFINED: repositories' tests and builds run as redfix's own user, with its view of the files, processes and network (set sandbox.mode: required to refuse)",
			zap.String("sandbox", st.String()))
	}
	return sandbox.With(ctx, box), st, nil
}

// sweep removes the workspaces a killed bot or worker left in the data
// directory (those of live processes sharing it are kept).
func sweep(cfg config.Config, log *zap.Logger) {
	removed, err := workspace.Sweep(filepath.Join(cfg.DataDir, "workspaces"))
	if err != nil {
		log.Warn("sweep abandoned workspaces", zap.Error(err))
	}
	if len(removed) > 0 {
		log.Info("removed abandoned workspaces", zap.Strings("dirs", removed))
	}
}
