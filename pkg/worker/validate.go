package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/validators"
	"github.com/redfix/redfix/pkg/workspace"
)

// Validation is what the gates and the judge found of a patch in hand
// (`worker validate`'s --json output).
type Validation struct {
	Repo  string   `json:"repo"`
	Base  string   `json:"base"`
	Patch string   `json:"patch"`
	Tests []string `json:"tests"`
	// AtBase says, per test, how it did at the base commit before the
	// patch: the failure the patch is meant to fix.
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

// ValidateRequest is a patch in hand and what it is meant to fix.
type ValidateRequest struct {
	// Repo is the local clone (an absolute path); the patch applies to its
	// HEAD.
	Repo string
	// Patch is a unified diff; PatchName says where it came from.
	Patch, PatchName string
	// Tests are the tests the patch must make pass, as reports name them
	// or bare.
	Tests []string
	// Blame is the commit that broke the tests, if known (it enables the
	// revert check).
	Blame string
}

// InputError is a request that cannot be validated as given: Input names
// what is wrong with it ("repo", "language", "blame" or "test"). Any other
// error of Validate is the machinery failing.
type InputError struct {
	Input string
	Err   error
}

func (e *InputError) Error() string { return e.Input + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Validator runs the gates and the judge on a patch in hand: the use case
// of `worker validate`.
type Validator struct {
	// Languages chooses the clone's language driver (lang.Drivers), once:
	// it names and runs the tests, and the gates and the judge hold the
	// patch to its rules. It is required: no language is assumed.
	Languages interface {
		For(repo, dir string) (lang.Driver, error)
	}
	Gates Gates
	Judge Judge
}

// Validate checks the clone's HEAD out in a workspace, records how the
// tests do there, applies the patch on a clean checkout and runs the gates
// and the judge.
func (v Validator) Validate(ctx context.Context, req ValidateRequest) (Validation, error) {
	repo := gitrepo.Repo{Dir: req.Repo}
	head, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		return Validation{}, &InputError{Input: "repo", Err: err}
	}
	out := Validation{Repo: req.Repo, Base: head, Patch: req.PatchName, Tests: req.Tests}
	t := task.Task{ID: "validate-" + task.Short(head), Repo: req.Repo, Commit: head, Status: task.StatusRunning, CreatedAt: time.Now().UTC()}
	var blameDiff, blameBody string
	if req.Blame != "" {
		sha, err := repo.Resolve(ctx, req.Blame)
		if err != nil {
			return Validation{}, &InputError{Input: "blame", Err: err}
		}
		c, err := repo.Show(ctx, sha)
		if err != nil {
			return Validation{}, err
		}
		t.Bisection = task.Bisection{Blame: sha, Bad: head, Subject: c.Subject, Author: c.Author}
		blameDiff, blameBody = c.Diff, c.Body
	}

	ws, err := workspace.Open(ctx, req.Repo, head, "")
	if err != nil {
		return Validation{}, err
	}
	defer ws.Close()
	d, err := v.language(ctx, req.Repo, head, ws.Dir)
	if err != nil {
		return Validation{}, err
	}
	// The tests at the base, before the patch: their failures are the task.
	for _, id := range req.Tests {
		f, at, err := atBase(ctx, d, ws.Dir, head, id)
		if err != nil {
			return Validation{}, err
		}
		t.Failures = append(t.Failures, f)
		out.AtBase = append(out.AtBase, at)
	}

	// The gates check the patch on a clean checkout: the tests just ran in
	// this one, and whatever they left there is not the patch's.
	clean, err := ws.Sibling(ctx, head, "")
	if err != nil {
		return Validation{}, err
	}
	defer clean.Close()
	ws = clean
	ctx = sandbox.WithTree(ctx, ws.Dir)
	applied, err := validators.Apply(ctx, ws, req.Patch)
	if err != nil {
		return Validation{}, err
	}
	out.Gates = append(out.Gates, applied)
	if applied.Verdict != task.GatePass {
		return finish(out), nil
	}
	// The gates read the patch as git writes it, whatever tool wrote it.
	patch, err := ws.Diff(ctx)
	if err != nil {
		return Validation{}, err
	}
	gates, err := v.Gates.Check(ctx, validators.Input{
		Dir: ws.Dir, Workspace: ws, Base: head, Patch: patch, Task: t, BlameDiff: blameDiff, Lang: d,
	})
	if err != nil {
		return Validation{}, err
	}
	out.Gates = append(out.Gates, gates...)
	if !task.Passed(gates) {
		out.Gates = append(out.Gates, task.Gate{Name: judge.GateName, Verdict: task.GateNotRun, Detail: "skipped: " + strings.Join(rejectedBy(gates), ", ") + " failed"})
		return finish(out), nil
	}
	g, err := v.Judge.Judge(ctx, judge.WithContext(ws.Dir, d, judge.Input{Task: t, Patch: patch, BlameDiff: blameDiff, BlameMessage: blameBody, Gates: gates}))
	if err != nil {
		return Validation{}, err
	}
	out.Gates = append(out.Gates, g)
	return finish(out), nil
}

// language is the driver of the clone repo, chosen from its checkout at
// dir (of head) and set up there.
func (v Validator) language(ctx context.Context, repo, head, dir string) (lang.Driver, error) {
	if v.Languages == nil {
		return nil, fmt.Errorf("choose the language of %s: %w", repo, errNoLanguages)
	}
	d, err := v.Languages.For(repo, dir)
	if err != nil {
		if errors.Is(err, lang.ErrNoDriver) {
			return nil, &InputError{Input: "language", Err: err}
		}
		return nil, fmt.Errorf("choose the language of %s: %w", repo, err)
	}
	if err := d.Setup(ctx, dir); err != nil {
		return nil, fmt.Errorf("set up the dependencies of %s at %s: %w", repo, task.Short(head), err)
	}
	return d, nil
}

// atBase runs the test id at the base (the checkout at dir, of head) and
// says how it did: its failure, the patch's task.
func atBase(ctx context.Context, d lang.Driver, dir, head, id string) (task.Failure, TestAtBase, error) {
	target, err := d.Resolve(dir, id)
	if err != nil {
		if errors.Is(err, testrun.ErrNotFound) || errors.Is(err, testrun.ErrAmbiguous) {
			return task.Failure{}, TestAtBase{}, &InputError{Input: "test", Err: err}
		}
		return task.Failure{}, TestAtBase{}, err
	}
	o, err := d.Run(ctx, dir, []string{target.ID}, 1)
	if err != nil {
		return task.Failure{}, TestAtBase{}, fmt.Errorf("run %s at %s: %w", target.ID, task.Short(head), err)
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
	return f, at, nil
}

// finish decides: accepted when every gate passed, the judge being the only
// one allowed not to run (no model configured).
func finish(v Validation) Validation {
	v.RejectedBy = rejectedBy(v.Gates)
	v.Accepted = task.Passed(v.Gates, judge.GateName)
	return v
}

// rejectedBy names the gates that did not pass, but for the judge not
// running and the gates skipped.
func rejectedBy(gates []task.Gate) []string {
	var names []string
	for _, g := range gates {
		if g.Verdict != task.GatePass && !(g.Verdict == task.GateNotRun && (g.Name == judge.GateName || strings.HasPrefix(g.Detail, "skipped: "))) {
			names = append(names, g.Name)
		}
	}
	return names
}

// WriteValidation writes the verdicts for a person: one line per gate, its
// evidence indented below.
func WriteValidation(w io.Writer, v Validation) {
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
