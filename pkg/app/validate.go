package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/termsafe"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/workspace"
)

// GateApply is the verdict on whether the patch applies to the clone's HEAD;
// `worker validate` shows it before the other gates.
const GateApply = "apply"

// Validation is what `worker validate` found: its --json output.
type Validation struct {
	Repo  string   `json:"repo"`
	Base  string   `json:"base"`
	Patch string   `json:"patch"`
	Tests []string `json:"tests"`
	// FailingAtBase says, per test, how it did at the base commit before
	// the patch: the failure the patch is meant to fix.
	AtBase   []TestAtBase `json:"at_base"`
	Accepted bool         `json:"accepted"`
	// RejectedBy names the gates that failed.
	RejectedBy []string    `json:"rejected_by,omitempty"`
	Gates      []task.Gate `json:"gates"`
}

// TestAtBase is one asked-for test at the base commit.
type TestAtBase struct {
	Test    string `json:"test"`
	Failing bool   `json:"failing"`
	Message string `json:"message,omitempty"`
}

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
	cfg, log, err := commonEnv("validate", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&repoPath, "repo", ".", "the local clone; the patch applies to its HEAD")
		fs.StringVar(&patchPath, "patch", "", "the candidate patch, a unified diff (git diff, diff -u)")
		fs.Var(&tests, "test", "a test the patch must make pass, as reports name it or bare (TestParse/sub); repeatable")
		fs.StringVar(&blame, "blame", "", "the commit that broke the tests, if known (enables the revert check)")
		fs.BoolVar(&asJSON, "json", false, "print the verdicts as one JSON object")
	})
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
	// The gates run the repository's tests: confined, as a worker's.
	ctx, _, err = confine(ctx, cfg, log)
	if err != nil {
		return err
	}
	ctx = sandbox.WithRepo(ctx, abs)
	v, err := validatePatch(ctx, cfg, log, validateRequest{repo: abs, patch: string(patch), patchName: patchPath, tests: tests, blame: blame})
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(termsafe.NewJSONWriter(stdout))
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return Machinery(err)
		}
	} else {
		// Test messages and the gates' evidence are the repository's text.
		printValidation(termsafe.NewWriter(stdout), v)
	}
	if !v.Accepted {
		return ErrRejected
	}
	return nil
}

// asUsage makes an error of the command line or the configuration a usage
// error (exit status 2) of command.
func asUsage(command string, err error) error {
	var ue *UsageError
	if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return Usage(command + ": " + err.Error())
}

type validateRequest struct {
	repo, patch, patchName string
	tests                  []string
	blame                  string
}

// validatePatch checks the clone's HEAD out in a workspace, records how the
// tests do there, applies the patch and runs the gates and the judge.
func validatePatch(ctx context.Context, cfg config.Config, log *zap.Logger, req validateRequest) (Validation, error) {
	repo := gitrepo.Repo{Dir: req.repo}
	head, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		return Validation{}, Usage(fmt.Sprintf("validate: %s is not a git repository with commits: %v", req.repo, err))
	}
	v := Validation{Repo: req.repo, Base: head, Patch: req.patchName, Tests: req.tests}
	t := task.Task{ID: "validate-" + task.Short(head), Repo: req.repo, Commit: head, Status: task.StatusRunning, CreatedAt: time.Now().UTC()}
	var blameDiff, blameBody string
	if req.blame != "" {
		sha, err := repo.Resolve(ctx, req.blame)
		if err != nil {
			return Validation{}, Usage(fmt.Sprintf("validate: --blame: %v", err))
		}
		c, err := repo.Show(ctx, sha)
		if err != nil {
			return Validation{}, Machinery(err)
		}
		t.Bisection = task.Bisection{Blame: sha, Bad: head, Subject: c.Subject, Author: c.Author}
		blameDiff, blameBody = c.Diff, c.Body
	}
	log = log.With(zap.String("repo", req.repo))

	ws, err := workspace.Open(ctx, req.repo, head, "")
	if err != nil {
		return Validation{}, Machinery(err)
	}
	defer ws.Close()

	// The tests at the base, before the patch: their failures are the task.
	runner := testrun.Runner{Timeout: 10 * time.Minute}
	for _, id := range req.tests {
		target, err := testrun.Resolve(ws.Dir, id)
		if err != nil {
			if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
				return Validation{}, Usage("validate: --test: " + err.Error())
			}
			return Validation{}, Machinery(err)
		}
		o, err := runner.Run(ctx, ws.Dir, []string{target.ID}, 1)
		if err != nil {
			return Validation{}, Machinery(fmt.Errorf("run %s at %s: %w", target.ID, task.Short(head), err))
		}
		f := task.Failure{Package: target.ImportPath, Test: target.Test}
		at := TestAtBase{Test: target.ID}
		switch {
		case len(o.Failed) > 0:
			f = o.Failed[0]
			f.Package, f.Test = target.ImportPath, target.Test
			at.Failing, at.Message = true, f.Message
		case len(o.Build) > 0:
			f.Message, f.Output = "does not build: "+o.Build[0].Message, o.Build[0].Output
			at.Failing, at.Message = true, f.Message
		case o.TimedOut:
			f.Message = "timed out"
			at.Failing, at.Message = true, f.Message
		default:
			at.Message = "passes before the patch"
		}
		t.Failures = append(t.Failures, f)
		v.AtBase = append(v.AtBase, at)
	}

	// The gates check the patch on a clean checkout: the tests just ran in
	// this one, and whatever they left there is not the patch's.
	clean, err := ws.Sibling(ctx, head, "")
	if err != nil {
		return Validation{}, Machinery(err)
	}
	defer clean.Close()
	ws = clean
	ctx = sandbox.WithTree(ctx, ws.Dir)
	applied, err := applyPatch(ctx, ws, req.patch)
	if err != nil {
		return Validation{}, Machinery(err)
	}
	v.Gates = append(v.Gates, applied)
	if applied.Verdict != task.GatePass {
		return finish(v), nil
	}
	// The gates read the patch as git writes it, whatever tool wrote it.
	patch, err := ws.Diff(ctx)
	if err != nil {
		return Validation{}, Machinery(err)
	}
	gates, err := validators.New(runner, validatorsConfig(cfg), log).Check(ctx, validators.Input{
		Dir: ws.Dir, Workspace: ws, Base: head, Patch: patch, Task: t, BlameDiff: blameDiff,
	})
	if err != nil {
		return Validation{}, Machinery(err)
	}
	v.Gates = append(v.Gates, gates...)
	j, err := newJudge(cfg, log)
	if err != nil {
		return Validation{}, Machinery(err)
	}
	if !task.Passed(gates) {
		v.Gates = append(v.Gates, task.Gate{Name: judge.GateName, Verdict: task.GateNotRun, Detail: "skipped: " + strings.Join(failed(gates), ", ") + " failed"})
		return finish(v), nil
	}
	g, err := j.Judge(ctx, judge.WithContext(ws.Dir, judge.Input{Task: t, Patch: patch, BlameDiff: blameDiff, BlameMessage: blameBody, Gates: gates}))
	if err != nil {
		return Validation{}, Machinery(err)
	}
	v.Gates = append(v.Gates, g)
	return finish(v), nil
}

// finish decides: accepted when every gate passed, the judge being the only
// one allowed not to run (no model configured).
func finish(v Validation) Validation {
	v.RejectedBy = failed(v.Gates)
	v.Accepted = task.Passed(v.Gates, judge.GateName)
	return v
}

func failed(gates []task.Gate) []string {
	var names []string
	for _, g := range gates {
		if g.Verdict != task.GatePass && !(g.Verdict == task.GateNotRun && (g.Name == judge.GateName || strings.HasPrefix(g.Detail, "skipped: "))) {
			names = append(names, g.Name)
		}
	}
	return names
}

// applyPatch applies patch to the workspace. A patch that does not apply is
// a failed gate naming the hunk that did not; the error is for git failing.
func applyPatch(ctx context.Context, ws *workspace.Workspace, patch string) (task.Gate, error) {
	start := time.Now()
	gate := func(verdict, detail string) task.Gate {
		return task.Gate{Name: GateApply, Verdict: verdict, Detail: detail, ElapsedMS: time.Since(start).Milliseconds()}
	}
	if strings.TrimSpace(patch) == "" {
		return gate(task.GateFail, "the patch is empty"), nil
	}
	files, perr := unidiff.Parse(patch)
	if perr != nil {
		return gate(task.GateFail, "the patch cannot be read as a unified diff: "+perr.Error()), nil
	}
	if len(files) == 0 {
		return gate(task.GateFail, "the patch holds no file diff"), nil
	}
	// Counts written by hand are often off: Apply recounts from the hunks'
	// bodies, which changes nothing for a diff whose counts are right.
	out, err := ws.Apply(ctx, patch)
	if err != nil {
		if ctx.Err() != nil {
			return task.Gate{}, ctx.Err()
		}
		return gate(task.GateFail, applyFailure(files, out, err)), nil
	}
	added, removed := 0, 0
	for _, fl := range files {
		for _, h := range fl.Hunks {
			a, r := h.Changed()
			added, removed = added+a, removed+r
		}
	}
	return gate(task.GatePass, fmt.Sprintf("applies to %s: %d file(s), +%d -%d", task.Short(ws.Commit), len(files), added, removed)), nil
}

var patchFailedRE = regexp.MustCompile(`patch failed: (.+):(\d+)`)

// applyFailure says which hunk did not apply, from git apply's complaint.
func applyFailure(files []unidiff.File, out string, err error) string {
	msg := strings.TrimSpace(out)
	if msg == "" {
		msg = err.Error()
	}
	// git's own words, without its progress lines.
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if !strings.HasPrefix(l, "Checking patch ") && !strings.HasPrefix(l, "Applied patch ") {
			lines = append(lines, l)
		}
	}
	msg = strings.Join(lines, "\n")
	m := patchFailedRE.FindStringSubmatch(msg)
	if m == nil {
		return "the patch does not apply:\n" + msg
	}
	line, _ := strconv.Atoi(m[2])
	for _, f := range files {
		if f.OldPath != m[1] && f.NewPath != m[1] {
			continue
		}
		for i, h := range f.Hunks {
			if h.OldStart == line {
				return fmt.Sprintf("hunk %d of %d in %s (@@ -%d,%d +%d,%d @@) does not apply: its context or removed lines are not in the file at line %d.\n%s",
					i+1, len(f.Hunks), m[1], h.OldStart, h.OldCount, h.NewStart, h.NewCount, line, msg)
			}
		}
	}
	return fmt.Sprintf("the hunk of %s at line %s does not apply.\n%s", m[1], m[2], msg)
}

// validatorsConfig is the gates' configuration.
func validatorsConfig(cfg config.Config) validators.Config {
	return validators.Config{
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

// printValidation writes the verdicts for a person: one line per gate, its
// evidence indented below.
func printValidation(w io.Writer, v Validation) {
	fmt.Fprintf(w, "patch %s on %s at %s\n", v.Patch, v.Repo, task.Short(v.Base))
	for _, at := range v.AtBase {
		state := "passes"
		if at.Failing {
			state = "fails"
		}
		fmt.Fprintf(w, "  before the patch %s %s", at.Test, state)
		if at.Failing && at.Message != "" {
			fmt.Fprintf(w, ": %s", firstLineOf(at.Message))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, g := range v.Gates {
		fmt.Fprintf(w, "%-10s %-7s", g.Name, strings.ToUpper(g.Verdict))
		if g.ElapsedMS > 0 {
			fmt.Fprintf(w, " (%s)", (time.Duration(g.ElapsedMS) * time.Millisecond).String())
		}
		fmt.Fprintln(w)
		for _, l := range strings.Split(strings.TrimRight(g.Detail, "\n"), "\n") {
			if l != "" {
				fmt.Fprintf(w, "           %s\n", l)
			}
		}
	}
	fmt.Fprintln(w)
	if v.Accepted {
		note := ""
		for _, g := range v.Gates {
			if g.Name == judge.GateName && g.Verdict == task.GateNotRun {
				note = " (the judge did not run: " + g.Detail + ")"
			}
		}
		fmt.Fprintf(w, "ACCEPTED: every gate passed%s\n", note)
		return
	}
	fmt.Fprintf(w, "REJECTED by %s\n", strings.Join(v.RejectedBy, ", "))
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
