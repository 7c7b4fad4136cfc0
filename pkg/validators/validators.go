// Package validators holds the gates a candidate patch must pass before it
// may become a pull request: integrity (no cheating on tests), revert (not a
// plain undo of the blame commit), static analysis (no new findings of the
// language's checks), oracle (the failing tests now pass, several times)
// and regression (the tests around the change still pass), each with the
// rules of the repository's language, which its driver states (Input.Lang;
// the capabilities of language.go). Each gate gives a task.Gate verdict
// with a detail a reviewer can read; the error of Check is kept for the
// machinery failing (a cancelled context, git or a test runner not
// running, an input without a driver), never for a rejected patch.
package validators

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/protected"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/workspace"
)

// Gate names, in the order Check runs them.
const (
	GateIntegrity  = "integrity"
	GateRevert     = "revert"
	GateStatic     = "static"
	GateOracle     = "oracle"
	GateRegression = "regression"
)

// Config tunes the gates.
type Config struct {
	// OracleRuns is how many times in a row the failing tests must pass
	// (0 means DefaultOracleRuns).
	OracleRuns int
	// AllowTestEdits lets a patch change the language's test files and
	// test data. Even then it may not delete or skip tests, or drop
	// assertions.
	AllowTestEdits bool
	// AllowedPaths are globs ("pkg/**", "internal/*/x.c") a patch may
	// touch; empty allows every path. They also unlock the protected files
	// (build, CI, ownership, git metadata and hooks, vendor, a language's
	// module files), but only where a pattern names the file explicitly:
	// "Makefile", "**/*.mk", ".github/**" do, "**" or "*.yml" do not (see
	// pkg/protected).
	AllowedPaths []string
	// Protected are the protected files of the languages the
	// configuration knows (their drivers' ProtectedFiles), held against
	// every repository after its own driver's: a Go module's files stay
	// protected in a repository of another language.
	Protected []protected.Kind
	// RegressionBudget is the time the regression gate may spend on the
	// tests of the packages that depend on the changed ones, after those of
	// the changed packages themselves (0 means DefaultRegressionBudget; a
	// negative budget runs no dependents). Checked between batches of
	// packages: the last batch may overrun it by its own duration.
	RegressionBudget time.Duration
	// MaxPatchLines and MaxPatchFiles bound the patch's changed lines
	// (added and removed) and files; 0 means no limit.
	MaxPatchLines int
	MaxPatchFiles int
}

// Defaults for Config's zero values.
const (
	DefaultOracleRuns = 3
	// DefaultRegressionBudget bounds the dependents' tests.
	DefaultRegressionBudget = 5 * time.Minute
)

// Validators runs the gates.
type Validators struct {
	cfg Config
	log *zap.Logger
}

// New returns the gates.
func New(cfg Config, log *zap.Logger) *Validators {
	if cfg.OracleRuns <= 0 {
		cfg.OracleRuns = DefaultOracleRuns
	}
	if cfg.RegressionBudget == 0 {
		cfg.RegressionBudget = DefaultRegressionBudget
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Validators{cfg: cfg, log: log}
}

// Input is one candidate patch.
type Input struct {
	// Dir is the module's root in a workspace with the patch applied. The
	// gates do not change it.
	Dir string
	// Workspace is the checkout Dir is in, when the caller has one: the
	// base checkout the gates compare with is made from its git data.
	// Without it, Dir must be a repository git can clone.
	Workspace *workspace.Workspace
	// Base is the commit the patch applies to (the task's commit).
	Base string
	// Patch is the candidate as a unified diff.
	Patch string
	Task  task.Task
	// BlameDiff is the diff of the commit that broke the tests; may be empty.
	BlameDiff string
	// Lang is the repository's language driver, chosen once for the job
	// from its checkout; an input without one is an error.
	Lang Language
	// Paths, when set, is the repository's own policy on the paths a
	// patch may change: the paths gate runs first with it.
	Paths PathPolicy
}

// gate is one step of Check.
type gate struct {
	name string
	// cheap gates read only the patch and always run, unless integrity
	// refused the patch unread (bounds.go); the others are skipped once a
	// gate has failed.
	cheap bool
	run   func(ctx context.Context, c *candidate) (task.Gate, error)
}

// Check runs every gate on the candidate and returns their verdicts in order:
// (paths, with the repository's policy,) integrity, revert, static, oracle,
// regression. The cheap ones (integrity, revert) always run; once a gate has
// not passed, the costly ones that follow are recorded as not run ("skipped:
// <gate> failed"). A patch out of bounds (an added line too long or nested
// too deep, too many files or lines: bounds.go) is refused by integrity
// before any parser reads it, and every gate after it is skipped.
func (v *Validators) Check(ctx context.Context, in Input) ([]task.Gate, error) {
	if in.Lang == nil {
		return nil, ErrNoLanguage
	}
	log := v.log.With(zap.String("task_id", in.Task.ID), zap.String("base", task.Short(in.Base)))
	c := v.candidate(in)
	defer c.close()

	var gates []gate
	if in.Paths != nil {
		gates = append(gates, gate{GateRepoPaths, true, v.repoPaths})
	}
	gates = append(gates, []gate{
		{GateIntegrity, true, v.integrity},
		{GateRevert, true, v.revert},
		{GateStatic, false, v.static},
		{GateOracle, false, v.oracle},
		{GateRegression, false, v.regression},
	}...)
	var (
		out     []task.Gate
		stopped string // why the costly gates are skipped
	)
	for _, g := range gates {
		if stopped != "" && (!g.cheap || c.refused) {
			out = append(out, task.Gate{Name: g.name, Verdict: task.GateNotRun, Detail: "skipped: " + stopped})
			continue
		}
		start := time.Now()
		res, err := g.run(ctx, c)
		if err != nil {
			return out, fmt.Errorf("%s gate on %s: %w", g.name, task.Short(in.Base), err)
		}
		res.Name = g.name
		res.ElapsedMS = time.Since(start).Milliseconds()
		out = append(out, res)
		log.Info("gate", zap.String("gate", g.name), zap.String("verdict", res.Verdict), zap.Int64("elapsed_ms", res.ElapsedMS))
		if res.Verdict != task.GatePass && stopped == "" {
			stopped = g.name + " failed"
			if res.Verdict == task.GateNotRun {
				stopped = g.name + " did not run"
			}
		}
	}
	return out, nil
}

// ErrNoLanguage is Check's error for an input without a language driver:
// the caller chooses one from the checkout.
var ErrNoLanguage = errors.New("validators: the input names no language driver (choose one from the checkout)")

// candidate is the patch under check and what the gates share about it.
type candidate struct {
	in       Input
	lang     Language // runs the tests too
	files    []unidiff.File
	parseErr error
	// refused is set by the integrity gate on a patch out of bounds: no
	// later gate reads it.
	refused bool
	base    *workspace.Workspace // a second checkout at Base, made on demand
}

// baseDir checks Base out next to the workspace, once, for gates that compare
// a finding with what was already there.
func (c *candidate) baseDir(ctx context.Context) (string, error) {
	if c.base == nil {
		var ws *workspace.Workspace
		var err error
		if c.in.Workspace != nil {
			ws, err = c.in.Workspace.Sibling(ctx, c.in.Base, "")
		} else {
			ws, err = workspace.Open(ctx, c.in.Dir, c.in.Base, "")
		}
		if err != nil {
			return "", fmt.Errorf("check out base %s: %w", task.Short(c.in.Base), err)
		}
		c.base = ws
	}
	return c.base.Dir, nil
}

func (c *candidate) close() {
	if c.base != nil {
		_ = c.base.Close()
	}
}

// infra reports whether err is the machinery failing (a cancelled context)
// rather than something about the patch.
func infra(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func pass(detail string) task.Gate { return task.Gate{Verdict: task.GatePass, Detail: detail} }
func fail(detail string) task.Gate { return task.Gate{Verdict: task.GateFail, Detail: detail} }
