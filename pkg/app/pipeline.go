package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/inflight"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/llmpolicy"
	"github.com/redfix/redfix/pkg/harness/offline"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/worker"
	"github.com/redfix/redfix/pkg/workspace"
)

// agent adapts a harness to the worker's Agent and Reviser.
type agent struct{ h *harness.Harness }

func (a agent) Run(ctx context.Context, ws *workspace.Workspace, t task.Task, traj io.Writer) (harness.Result, error) {
	return a.h.Run(ctx, ws, t, traj)
}

// WithLanguage is the agent with its tools working through the job's
// language driver.
func (a agent) WithLanguage(l tools.Language) worker.Agent { return agent{h: a.h.WithLanguage(l)} }

func (a agent) Revise(ctx context.Context, ws *workspace.Workspace, t task.Task, prior []harness.Step, evidence string, traj io.Writer) (harness.Result, error) {
	return a.h.Revise(ctx, ws, t, prior, evidence, traj)
}

// NewPipeline assembles the repair pipeline the configuration describes:
// the LLM policy and judge when a model is configured, the offline policy
// and a judge that does not run otherwise; pull requests on the
// repository's forge when the publish mode is github (local repositories
// still publish locally), local ones otherwise; workspaces from mirrors of
// remote repositories.
func NewPipeline(cfg config.Config, ledger worker.Ledger, log *zap.Logger) (*worker.Pipeline, error) {
	forges, err := newForges(cfg, log)
	if err != nil {
		return nil, err
	}
	return NewPipelineWith(cfg, ledger, forges, log)
}

// NewPipelineWith is NewPipeline with the process's forges, so that one
// client per installation is shared with the rest of the process.
func NewPipelineWith(cfg config.Config, ledger worker.Ledger, forges *forge.Forges, log *zap.Logger) (*worker.Pipeline, error) {
	return newPipeline(cfg, ledger, forges, nil, log)
}

// newPipeline is NewPipelineWith with onModelError, when set, hearing the
// class of every failed model call (llm.ErrorClass).
func newPipeline(cfg config.Config, ledger worker.Ledger, forges *forge.Forges, onModelError func(class string), log *zap.Logger) (*worker.Pipeline, error) {
	drivers, err := languages(cfg, log)
	if err != nil {
		return nil, err
	}
	// Each episode gets its share of the task's budget: the candidates run
	// side by side.
	k := max(cfg.Harness.Samples, 1)
	hcfg := harness.Config{MaxSteps: cfg.Harness.MaxSteps, Budget: harness.Budget{
		Tokens: cfg.Harness.MaxTokens / k, CostUSD: cfg.Harness.MaxCostUSD / float64(k), Wall: cfg.Harness.MaxWall,
	}}
	var (
		newAgent func() worker.Agent
		j        worker.Judge = judge.NotRun{}
		name                  = "offline"
	)
	red := redactor(cfg)
	if cfg.LLM.Enabled() {
		raw, err := llm.NewClient(llm.Config{
			Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: cfg.LLM.Model,
			Timeout: cfg.LLM.Timeout, MaxRetries: cfg.LLM.MaxRetries, OnError: onModelError,
		}, log)
		if err != nil {
			return nil, fmt.Errorf("model client: %w", err)
		}
		client := llm.Redacting{Client: raw, Redactor: red}
		opts := llmpolicy.Options{TextTools: cfg.LLM.ToolFormat == "text", ContextWindow: cfg.LLM.ContextWindow}
		if k > 1 {
			temp := cfg.Harness.SampleTemperature
			opts.Temperature = &temp
		}
		price := llm.Price(cfg.LLM.Prices[cfg.LLM.Model])
		newAgent = func() worker.Agent {
			// One meter per episode: the policy's and the patcher's calls.
			m := llm.NewMeter(client, price)
			hc := hcfg
			hc.Meter = m
			return agent{h: harness.New(hc, llmpolicy.NewWithOptions(m, opts, log), nil, llmpolicy.NewPatcher(m, log), log)}
		}
		// The judge's calls are metered too, each charged to its task.
		j = judge.NewCommittee(llm.NewMeter(client, price), cfg.Judge.Votes, log)
		name = "llm:" + cfg.LLM.Model
	} else {
		newAgent = func() worker.Agent {
			return agent{h: harness.New(hcfg, offline.New(log, drivers.All()), nil, nil, log)}
		}
	}
	pubDir := cfg.Publish.Dir
	if pubDir == "" {
		pubDir = filepath.Join(cfg.DataDir, "pull-requests")
	}
	if cfg.PublishMode() == "github" && githubOf(forges) == nil {
		return nil, errors.New("publish mode github: GitHub credentials are not configured")
	}
	if cfg.PublishMode() == "gitlab" && gitlabOf(forges) == nil {
		return nil, errors.New("publish mode gitlab: no GitLab token is configured")
	}
	mirrors := NewMirrors(cfg, forges)
	local := publish.NewLocal(pubDir, log)
	var (
		publisher worker.Publisher = local
		revisions worker.RevisionPublisher
		reverts   worker.Reverts
	)
	if publishesOnForges(cfg, forges) {
		gp := publish.NewForge(forges, mirrors, drivers, log)
		publisher = publish.ByRepo{Forge: gp, Local: local}
		revisions = publish.RedactingRevisions{Publisher: gp, Redactor: red}
		if st, ok := ledger.(revertStore); ok {
			if r := newReverter(cfg, st, forges, gp, mirrors, drivers, log); r != nil {
				reverts = r
			}
		}
	}
	return &worker.Pipeline{
		NewAgent:       newAgent,
		Samples:        k,
		Parallel:       max(cfg.Worker.Slots, 1),
		Model:          cfg.LLM.Model,
		RepoDaily:      harness.Budget{Tokens: cfg.Harness.RepoDailyMaxTokens, CostUSD: cfg.Harness.RepoDailyMaxCostUSD},
		FeedbackRounds: cfg.Harness.FeedbackRounds,
		Policy:         name,
		Gates:          validators.New(validatorsConfig(cfg, drivers), log),
		Judge:          j,
		Publisher:      publish.Redacting{Publisher: publisher, Redactor: red},
		Revisions:      revisions,
		Ledger:         ledger,
		Reverts:        reverts,
		WorkDir:        filepath.Join(cfg.DataDir, "workspaces"),
		Checkouts:      mirrors,
		Languages:      drivers,
		RepoPolicies:   NewRepoPolicies(cfg, forges, mirrors, log),
		OpenPulls:      inflight.Own{Forges: forges},
		Log:            log,
	}, nil
}

// publishesOnForges reports whether remote repositories' fixes are
// published on their forges: a forge's publish.mode (github or gitlab,
// that forge configured), or no mode set and a forge registered. Each
// fix goes to the forge that serves its repository.
func publishesOnForges(cfg config.Config, forges *forge.Forges) bool {
	mode := cfg.PublishMode()
	return mode == "github" || mode == "gitlab" || cfg.Publish.Mode == "" && len(forges.Drivers()) > 0
}

// NewMirrors is the workers' cache of repository mirrors; git
// authenticates to a forge's repositories with the credentials its driver
// gives.
func NewMirrors(cfg config.Config, forges *forge.Forges) *workspace.Mirrors {
	dir := cfg.Checkouts.MirrorDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "mirrors")
	}
	m := &workspace.Mirrors{Dir: dir, MaxBytes: cfg.Checkouts.MaxMirrorBytes}
	if len(forges.Drivers()) > 0 {
		m.Auth = forges.GitEnv
	}
	return m
}

// ownMirrors is a cache of mirrors of its own for one part of the process
// (triage, reverts, the keeper), beside the workers' in a directory named
// for it: a mirror cache tracks the work trees in use in its own process
// only, so two caches never share a directory.
func ownMirrors(cfg config.Config, forges *forge.Forges, part string) *workspace.Mirrors {
	dir := cfg.Checkouts.MirrorDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "mirrors")
	}
	cfg.Checkouts.MirrorDir = filepath.Clean(dir) + "-" + part
	return NewMirrors(cfg, forges)
}
