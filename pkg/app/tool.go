package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/llmpolicy"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/workspace"
)

// ErrToolProblem is returned when the action ran but reported a problem
// the agent would have been shown (a bad path, an edit that did not apply,
// failing tests): the observation is printed all the same.
var ErrToolProblem = fmt.Errorf("the action reported a problem (its observation is above)")

const toolUsage = `usage: worker tool [--repo PATH] [--test ID]... [--blame REV] ACTION [key=value ...]
       worker tool --list

Runs one of the agent's actions on a clone, with the arguments the model
would give, and prints the observation the agent would get. Paths are
confined to the clone as in an episode; edit changes the clone's files.
Example: worker tool --repo . read_file path=calc.go start_line=10

`

// Tool runs one harness action by hand.
func Tool(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newCommandLine("tool", stderr, os.Getenv)
	fs.Usage = func() { fmt.Fprint(stderr, toolUsage); fs.PrintDefaults() }
	var (
		repoPath, blame string
		tests           stringList
		list            bool
	)
	fs.StringVar(&repoPath, "repo", ".", "the clone to act on")
	fs.Var(&tests, "test", "a failing test the task names (run_tests' default, get_task_details); repeatable")
	fs.StringVar(&blame, "blame", "", "the commit get_diff_details shows by default")
	fs.BoolVar(&list, "list", false, "list the actions and their arguments")
	// The action and its arguments follow the flags.
	if err := fs.Parse(args); err != nil {
		return err
	}
	if list {
		fmt.Fprint(stdout, tools.Usage())
		return nil
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return Usage("tool: no action given (worker tool --list shows them)")
	}
	name := fs.Arg(0)
	raw, err := tools.ArgsFromPairs(name, fs.Args()[1:])
	if err != nil {
		return Usage("tool: " + err.Error())
	}
	// The configuration names the model for edit instructions.
	cfg, log, err := fs.load(stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	ws, t, err := toolTask(ctx, repoPath, tests, blame)
	if err != nil {
		return err
	}
	abs := ws.Dir

	defer limitMemory(cfg, log)()
	// The clone's commands (run_tests, the static analysis after an edit)
	// run confined like a worker's, writing the clone only.
	ctx, _, err = confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	ctx = sandbox.WithTree(sandbox.WithRepo(ctx, abs), abs)
	patcher, err := toolPatcher(cfg, log)
	if err != nil {
		return err
	}
	l, err := toolLanguage(ctx, cfg, log, abs, t.Commit, stderr)
	if err != nil {
		return err
	}
	h := harness.New(harness.Config{MaxSteps: cfg.Harness.MaxSteps}, nil, l, patcher, log)
	obs, err := h.Execute(ctx, ws, t, harness.Action{Name: name, Args: raw})
	if err != nil {
		return err
	}
	content := obs.Content
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	// The observation is the repository's text (files, test output).
	fmt.Fprint(termsafe.NewWriter(stdout), content)
	if obs.IsError {
		return ErrToolProblem
	}
	return nil
}

// toolTask is the workspace of the clone at repoPath (its HEAD, edited in
// place) and the task the tools act for: the failing tests as given, and
// the blame commit.
func toolTask(ctx context.Context, repoPath string, tests []string, blame string) (*workspace.Workspace, task.Task, error) {
	abs, err := filepath.Abs(repoPath)
	if err != nil {
		return nil, task.Task{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	repo := gitrepo.Repo{Dir: abs}
	head, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		return nil, task.Task{}, fmt.Errorf("tool: %s is not a git repository with commits: %w", abs, err)
	}
	t := task.Task{ID: "tool-" + task.Short(head), Repo: abs, Commit: head}
	for _, id := range tests {
		// The id as reports write it; Failure.ID gives it back unchanged.
		t.Failures = append(t.Failures, task.Failure{Test: id})
	}
	if blame != "" {
		sha, err := repo.Resolve(ctx, blame)
		if err != nil {
			return nil, t, fmt.Errorf("tool: --blame: %w", err)
		}
		t.Bisection = task.Bisection{Blame: sha, Bad: head}
	}
	return &workspace.Workspace{Dir: abs, Commit: head, Repo: repo}, t, nil
}

// toolPatcher is the model that turns edit instructions into edits, when
// one is configured.
func toolPatcher(cfg config.Config, log *zap.Logger) (tools.Patcher, error) {
	if !cfg.LLM.Enabled() {
		return nil, nil
	}
	client, err := llm.NewClient(llm.Config{Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey,
		Model: cfg.LLM.Model, Timeout: cfg.LLM.Timeout, MaxRetries: cfg.LLM.MaxRetries}, log)
	if err != nil {
		return nil, fmt.Errorf("model client: %w", err)
	}
	return llmpolicy.NewPatcher(client, log), nil
}

// toolLanguage is the clone's language driver, as a job's tools have it:
// with the test settings of its .redfix.yaml at head. On a clone no
// driver knows, the tools that only read still work and the others are
// refused with the reason (tools.Unknown).
func toolLanguage(ctx context.Context, cfg config.Config, log *zap.Logger, abs, head string, stderr io.Writer) (tools.Language, error) {
	drivers, err := languages(cfg, log)
	if err != nil {
		return nil, err
	}
	pol, err := clonePolicy(ctx, cfg, log, abs, head, sayTo(termsafe.NewWriter(stderr)))
	if err != nil {
		return nil, fmt.Errorf("tool: %w", err)
	}
	switch drv, err := withTests(drivers, pol.Tests).For(abs, abs); {
	case err == nil:
		return drv, nil
	case errors.Is(err, lang.ErrNoDriver):
		return tools.Unknown(err), nil
	default:
		return nil, fmt.Errorf("tool: %w", err)
	}
}
