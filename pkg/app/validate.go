package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/worker"
)

// Validate is `worker validate`: every gate, and the judge when a model is
// configured, on a unified diff against a local clone's HEAD. It returns nil
// when every gate passed, ErrRejected when one rejected, and a usage or
// machinery error (exit status 2) when it could not decide.
func Validate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return validateCommand(ctx, args, os.Getenv, stdout, stderr)
}

func validateCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var (
		repoPath, patchPath, blame string
		tests                      stringList
		asJSON                     bool
	)
	fs := newCommandLine("validate", stderr, getenv)
	fs.StringVar(&repoPath, "repo", ".", "the local clone; the patch applies to its HEAD")
	fs.StringVar(&patchPath, "patch", "", "the candidate patch, a unified diff (git diff, diff -u)")
	fs.Var(&tests, "test", "a test the patch must make pass, as reports name it or bare (TestParse/sub, tests/test_x.py::test_y[p], test_y); repeatable")
	fs.StringVar(&blame, "blame", "", "the commit that broke the tests, if known (enables the revert check)")
	fs.BoolVar(&asJSON, "json", false, "print the verdicts as one JSON object")
	if err := fs.parse(args); err != nil {
		return asUsage("validate", err)
	}
	cfg, log, err := fs.load(stderr)
	if err != nil {
		return asUsage("validate", err)
	}
	defer func() { _ = log.Sync() }()
	if patchPath == "" {
		return Usage("validate: --patch is required")
	}
	if len(tests) == 0 {
		return Usage("validate: --test is required")
	}
	patch, err := os.ReadFile(patchPath)
	if err != nil {
		return Usage(fmt.Sprintf("validate: read the patch: %v", err))
	}
	abs, err := filepath.Abs(repoPath)
	if err != nil {
		return Machinery(err)
	}
	defer limitMemory(cfg, log)()
	// The gates run the repository's tests: confined, as a worker's.
	ctx, _, err = confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	ctx = sandbox.WithRepo(ctx, abs)
	log = log.With(zap.String("repo", abs))
	drivers, err := languages(cfg, log)
	if err != nil {
		return asUsage("validate", err)
	}
	// The clone's .redfix.yaml at HEAD, as a worker reads it: the gates
	// run its tests with its test settings.
	head, err := (gitrepo.Repo{Dir: abs}).Resolve(ctx, "HEAD")
	if err != nil {
		return Usage(fmt.Sprintf("validate: %s is not a git repository with commits: %v", abs, err))
	}
	pol, err := clonePolicy(ctx, cfg, log, abs, head, sayTo(termsafe.NewWriter(stderr)))
	if err != nil {
		return Machinery(fmt.Errorf("validate: %w", err))
	}
	j, err := newJudge(cfg, log)
	if err != nil {
		return Machinery(err)
	}
	// The clone's driver runs its tests, and the gates'.
	validator := worker.Validator{Languages: withTests(drivers, pol.Tests), Gates: validators.New(validatorsConfig(cfg, drivers), log), Judge: j}
	v, err := validator.Validate(ctx, worker.ValidateRequest{Repo: abs, Patch: string(patch), PatchName: patchPath, Tests: tests, Blame: blame})
	if err != nil {
		return validateError(abs, err)
	}
	if asJSON {
		enc := json.NewEncoder(termsafe.NewJSONWriter(stdout))
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return Machinery(err)
		}
	} else {
		// Test messages and the gates' evidence are the repository's text.
		worker.WriteValidation(termsafe.NewWriter(stdout), v)
	}
	if !v.Accepted {
		return ErrRejected
	}
	return nil
}

// validateError says what went wrong in the command's terms: a request
// that cannot be validated as given is a usage error, anything else the
// machinery failing.
func validateError(repo string, err error) error {
	var ie *worker.InputError
	if !errors.As(err, &ie) {
		return Machinery(err)
	}
	switch ie.Input {
	case "repo":
		return Usage(fmt.Sprintf("validate: %s is not a git repository with commits: %v", repo, ie.Err))
	case "language":
		return Usage(fmt.Sprintf("validate: %s: %v", repo, ie.Err))
	case "blame":
		return Usage(fmt.Sprintf("validate: --blame: %v", ie.Err))
	case "test":
		return Usage("validate: --test: " + ie.Err.Error())
	}
	return Usage("validate: " + ie.Error())
}

// validatorsConfig is the gates' configuration.
func validatorsConfig(cfg config.Config, drivers *lang.Drivers) validators.Config {
	return validators.Config{
		Protected:        validators.ProtectedFilesOf(drivers.All()),
		OracleRuns:       cfg.Validators.OracleRuns,
		AllowTestEdits:   cfg.Validators.AllowTestEdits,
		AllowedPaths:     cfg.Validators.AllowedPaths,
		RegressionBudget: cfg.Validators.RegressionBudget,
		MaxPatchLines:    cfg.Validators.MaxPatchLines,
		MaxPatchFiles:    cfg.Validators.MaxPatchFiles,
	}
}

// newJudge is the LLM judge when a model is configured, and a judge that
// does not run otherwise.
func newJudge(cfg config.Config, log *zap.Logger) (interface {
	Judge(context.Context, judge.Input) (task.Gate, error)
}, error) {
	if !cfg.LLM.Enabled() {
		return judge.NotRun{}, nil
	}
	client, err := llm.NewOpenAI(llm.Config{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: cfg.LLM.Model, Timeout: cfg.LLM.Timeout})
	if err != nil {
		return nil, fmt.Errorf("model client: %w", err)
	}
	return judge.NewCommittee(client, cfg.Judge.Votes, log), nil
}
