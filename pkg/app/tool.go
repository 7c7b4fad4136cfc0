package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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

	abs, err := filepath.Abs(repoPath)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	repo := gitrepo.Repo{Dir: abs}
	head, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		return fmt.Errorf("tool: %s is not a git repository with commits: %w", abs, err)
	}
	ws := &workspace.Workspace{Dir: abs, Commit: head, Repo: repo}
	t := task.Task{ID: "tool-" + task.Short(head), Repo: abs, Commit: head}
	for _, id := range tests {
		// The id as reports write it; Failure.ID gives it back unchanged.
		t.Failures = append(t.Failures, task.Failure{Test: id})
	}
	if blame != "" {
		sha, err := repo.Resolve(ctx, blame)
		if err != nil {
			return fmt.Errorf("tool: --blame: %w", err)
		}
		t.Bisection = task.Bisection{Blame: sha, Bad: head}
	}

	defer limitMemory(cfg, log)()
	// The clone's commands (run_tests, the static analysis after an edit)
	// run confined like a worker's, writing the clone only.
	ctx, _, err = confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	ctx = sandbox.WithTree(sandbox.WithRepo(ctx, abs), abs)
	var patcher tools.Patcher
	if cfg.LLM.Enabled() {
		client, err := llm.NewClient(llm.Config{Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey,
			Model: cfg.LLM.Model, Timeout: cfg.LLM.Timeout, MaxRetries: cfg.LLM.MaxRetries}, log)
		if err != nil {
			return fmt.Errorf("model client: %w", err)
		}
		patcher = llmpolicy.NewPatcher(client, log)
	}
	// The tools work through the clone's language driver, as a job's do;
	// on a clone no driver knows, the tools that only read still work and
	// the others are refused with the reason (tools.Unknown).
	drivers, err := languages(cfg, log)
	if err != nil {
		return err
	}
	var l tools.Language
	switch drv, err := drivers.For(abs, abs); {
	case err == nil:
		l = drv
	case errors.Is(err, lang.ErrNoDriver):
		l = tools.Unknown(err)
	default:
		return fmt.Errorf("tool: %w", err)
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
