package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/redact"
	"github.com/redfix/redfix/pkg/sandbox"
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
	if err := prepareDataDir(cfg.DataDir, log); err != nil {
		return ctx, sandbox.Status{}, err
	}
	sc := cfg.Sandbox
	cache := sc.CacheDir
	if cache == "" {
		cache = filepath.Join(cfg.DataDir, "cache")
	}
	// Relative paths (`--config redfix.yaml`) are made absolute by
	// sandbox.New, from this working directory.
	hide := append([]string{cfg.DataDir, cfg.Publish.Dir, cfg.File, cfg.GitHub.PrivateKeyFile, cfg.NATS.CredentialsFile, cfg.Checkouts.MirrorDir}, cfg.SecretFiles...)
	box, err := sandbox.New(ctx, sandbox.Config{
		Mode:         sc.Mode,
		Network:      sc.Network,
		NetworkRepos: sc.NetworkRepos,
		Memory:       int64(sc.MemoryMB) << 20,
		CPUTime:      sc.CPUTime,
		FileSize:     int64(sc.FileSizeMB) << 20,
		TmpSize:      int64(sc.TmpMB) << 20,
		CacheDir:     cache,
		SharedCache:  sc.GoCache == "shared",
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

// redactingClient is a model client whose every request is redacted: the
// prompts, tool observations and tool calls a policy, the patcher or the
// judge sends.
type redactingClient struct {
	llm.Client
	r *redact.Redactor
}

func (c redactingClient) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	msgs := make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = c.r.String(m.Content)
		if len(m.ToolCalls) > 0 {
			calls := make([]llm.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				tc.Arguments = c.r.String(tc.Arguments)
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		msgs[i] = m
	}
	req.Messages = msgs
	return c.Client.Chat(ctx, req)
}

// publisher is what the pipeline publishes with.
type publisher interface {
	Publish(ctx context.Context, pr publish.PullRequest) (string, error)
}

// redactingPublisher redacts a pull request before it is published: its
// task (failures, outputs), summary, trajectory and blame subject. The
// patch loses only the bot's own secret values, so that it still applies.
type redactingPublisher struct {
	publisher
	r *redact.Redactor
}

func (p redactingPublisher) Publish(ctx context.Context, pr publish.PullRequest) (string, error) {
	t, err := redact.Value(p.r, pr.Task)
	if err != nil {
		return "", fmt.Errorf("redact task %s: %w", pr.Task.ID, err)
	}
	gates, err := redact.Value(p.r, pr.Gates)
	if err != nil {
		return "", fmt.Errorf("redact gates of task %s: %w", pr.Task.ID, err)
	}
	pr.Task, pr.Gates = t, gates
	pr.Summary = p.r.String(pr.Summary)
	pr.BlameSubject = p.r.String(pr.BlameSubject)
	pr.Trajectory = p.r.JSONLines(pr.Trajectory)
	pr.Patch = p.r.Values(pr.Patch)
	return p.publisher.Publish(ctx, pr)
}
