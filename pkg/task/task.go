// Package task holds redfix's domain types: a test failure as CI reports it,
// the group that identical failures share, and the task that triage hands to a
// worker once a failure is known to be real, new and bisected.
package task

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Failure is one failing test as a report names it.
type Failure struct {
	// Package is the Go import path (go test -json) or the JUnit classname.
	Package string `json:"package,omitempty"`
	// Test is the test's name, subtests joined with '/' (TestParse/empty).
	Test string `json:"test"`
	// Message is the first meaningful line of the failure.
	Message string `json:"message,omitempty"`
	// Output is the test's whole output, capped by whoever filled it.
	Output string `json:"output,omitempty"`
	// Frames are the top source locations named by the output (file:line).
	Frames []string `json:"frames,omitempty"`
	// Kind is "error" when the test ended on an unexpected error (JUnit's
	// <error>: an exception, a failed setup) rather than a failed
	// assertion; empty otherwise.
	Kind string `json:"kind,omitempty"`
}

// ID is the test as reports name it: "pkg.TestName/sub", or the bare test
// name when the package is unknown, or the package alone for a package that
// did not build (no test). Where the package is a file of tests (a
// registered driver's rule says so: IsTestFilePath), the id is the
// runner's: the file and the test joined by "::".
func (f Failure) ID() string {
	if f.Package == "" || f.Test == "" {
		return f.Package + f.Test
	}
	if IsTestFilePath(f.Package) {
		return f.Package + "::" + f.Test
	}
	return f.Package + "." + f.Test
}

// Status is where a task stands.
type Status string

// The statuses a task moves through. Terminal ones end with a reason.
const (
	StatusQueued    Status = "queued"    // a job is on the queue
	StatusRunning   Status = "running"   // a worker holds it
	StatusPublished Status = "published" // a pull request exists
	StatusNoPatch   Status = "no_patch"  // the agent found nothing that passed the gates
	StatusFailed    Status = "failed"    // an infrastructure error ended it
	StatusDropped   Status = "dropped"   // triage stopped it (flaky, duplicate, passing, …)
	// StatusOverBudget: the repository's daily model budget was spent
	// before the task could start.
	StatusOverBudget Status = "over_budget"
)

// Statuses lists every status, in the order a task moves through them.
var Statuses = []Status{StatusQueued, StatusRunning, StatusPublished, StatusNoPatch, StatusFailed, StatusDropped, StatusOverBudget}

// Final reports whether a task in status s is done with: nothing moves it
// on (a later failure of its group is a new task).
func (s Status) Final() bool {
	switch s {
	case StatusPublished, StatusNoPatch, StatusFailed, StatusDropped, StatusOverBudget:
		return true
	}
	return false
}

// Active reports whether a task in status s is in hand: queued, running or
// published. Its blame commit stays its while it is.
func (s Status) Active() bool {
	switch s {
	case StatusQueued, StatusRunning, StatusPublished:
		return true
	}
	return false
}

// Flakiness is the evidence from re-running a failing test at one commit.
type Flakiness struct {
	Runs     int    `json:"runs"`
	Failures int    `json:"failures"`
	Verdict  string `json:"verdict"` // "reliable", "flaky" or "passing"
}

// TestFlakiness is what the re-runs of one test did.
type TestFlakiness struct {
	Test     string `json:"test"`
	Runs     int    `json:"runs"`
	Failures int    `json:"failures"`
	Verdict  string `json:"verdict"`
}

// Bisection is where a failure started.
type Bisection struct {
	Good    string `json:"good"`
	Bad     string `json:"bad"`
	Blame   string `json:"blame"`
	Subject string `json:"subject,omitempty"`
	Author  string `json:"author,omitempty"`
	// Steps is the number of test runs the bisection spent.
	Steps int `json:"steps"`
	// Confidence is the posterior probability of the finding (the blame,
	// or "only flakes"), 0..1.
	Confidence float64 `json:"confidence,omitempty"`
	// CachedRuns counts the runs reused from earlier searches.
	CachedRuns int `json:"cached_runs,omitempty"`
	// Finding is culprit, fails-at-good, only-flakes or undecided.
	Finding string `json:"finding,omitempty"`
	// AddedTest says the blamed commit added the test: it has been
	// failing since it was added.
	AddedTest bool `json:"added_test,omitempty"`
	// FlakeRate is the flake rate the bisection learned, 0..1.
	FlakeRate float64 `json:"flake_rate,omitempty"`
	// Evidence is how many times likelier the runs were under the
	// bisection's model than under a test failing half of its runs at
	// every commit (bisect.NoisySearch.Evidence).
	Evidence float64 `json:"evidence,omitempty"`
}

// EvidenceText says what Evidence means for a reader ("" when the
// bisection kept none): "the test runs were 64 times likelier with this
// culprit than for a test failing half of its runs at every commit".
func (b Bisection) EvidenceText() string {
	if b.Evidence <= 0 {
		return ""
	}
	times := fmt.Sprintf("%.0f times", b.Evidence)
	if b.Evidence < 10 {
		times = fmt.Sprintf("%.1f times", b.Evidence)
	}
	return "the test runs were " + times + " likelier with this culprit than for a test failing half of its runs at every commit"
}

// Rule verdicts.
const (
	RulePass       = "pass"        // checked: nothing stops the task
	RuleDrop       = "drop"        // checked: the task is dropped for it
	RuleNotChecked = "not_checked" // it could not be checked; never a drop
)

// RuleCheck is what one of triage's rules found about a task.
type RuleCheck struct {
	Rule    string `json:"rule"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
}

// Task is a real, reproduced, bisected failure group that a worker repairs.
type Task struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
	Repo        string `json:"repo"`   // a path or URL that `git clone` accepts
	Commit      string `json:"commit"` // the failing commit
	Branch      string `json:"branch,omitempty"`
	// Fork is the head repository of the pull request from a fork whose
	// run failed ("" for the repository's own commits); PolicyCommit is
	// then the commit of the default branch whose .redfix.yaml governs the
	// task (the fork's own copy is its author's to write).
	Fork         string `json:"fork,omitempty"`
	PolicyCommit string `json:"policy_commit,omitempty"`
	// TestSettings are the repository's test settings every run of its
	// tests used ("env TZ=America/New_York; args --doctest-modules"; its
	// .redfix.yaml's tests: section or the central configuration's).
	TestSettings string    `json:"test_settings,omitempty"`
	Failures     []Failure `json:"failures"`
	Flakiness    Flakiness `json:"flakiness"`
	// FlakinessByTest is the re-run evidence test by test.
	FlakinessByTest []TestFlakiness `json:"flakiness_by_test,omitempty"`
	Bisection       Bisection       `json:"bisection"`
	// BlameClaim is the group of the task's blame commit when the task
	// owns it (one task per breaking commit): its claim lives while the
	// task is queued, running or published, and ends with it otherwise.
	BlameClaim string `json:"blame_claim,omitempty"`
	// Rules are the rules triage checked before queueing the task, with
	// what each found (a rule that could not be checked says why).
	Rules       []RuleCheck `json:"rules,omitempty"`
	Status      Status      `json:"status"`
	Reason      string      `json:"reason,omitempty"`
	PullRequest string      `json:"pull_request,omitempty"`
	// Description is the published fix's description (its title as a
	// heading, then the body a pull request gets), kept here where the
	// fix was delivered somewhere without a page that shows it (a branch
	// pushed to a plain git remote); "" otherwise.
	Description string `json:"description,omitempty"`
	// Spend is what the task's model calls used and cost, over its
	// attempts (nil before the first ends).
	Spend *Spend `json:"spend,omitempty"`
	// Rounds are the agent's rounds in the last attempt that ran one:
	// each candidate's episode and feedback rounds, with the gates'
	// verdicts, the patch and the trajectory of each (bounded: see
	// BoundRounds).
	Rounds    []Round   `json:"rounds,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Spend is what model calls used and cost: the agent's episodes (every
// candidate and feedback round) and the judge's verdicts.
type Spend struct {
	Model        string  `json:"model,omitempty"`
	Calls        int     `json:"calls"`
	InputTokens  int     `json:"input_tokens"`
	CachedTokens int     `json:"cached_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Add returns s plus o; o's model, when it names one, is the sum's.
func (s Spend) Add(o Spend) Spend {
	out := Spend{Model: s.Model, Calls: s.Calls + o.Calls, InputTokens: s.InputTokens + o.InputTokens,
		CachedTokens: s.CachedTokens + o.CachedTokens, OutputTokens: s.OutputTokens + o.OutputTokens, CostUSD: s.CostUSD + o.CostUSD}
	if o.Model != "" {
		out.Model = o.Model
	}
	return out
}

// RepoSpend is what the model calls for one repository cost on one UTC
// day.
type RepoSpend struct {
	Tokens  int     `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// ErrNotFound is returned for a task that is not there.
var ErrNotFound = errors.New("not found")

// Filter selects tasks; a zero field selects every task.
type Filter struct {
	// Status keeps the tasks that stand in it now.
	Status Status
	// Repo keeps one repository's tasks, named as tasks name it (the
	// canonical form, repourl.Canonical).
	Repo string
	// Limit is how many at most (the store's default when <= 0).
	Limit int
}

// Tests are the failing tests' IDs.
func (t Task) Tests() []string {
	ids := make([]string, 0, len(t.Failures))
	for _, f := range t.Failures {
		ids = append(ids, f.ID())
	}
	return ids
}

// Short abbreviates a commit hash for people.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Title is a one-line description of the task.
func (t Task) Title() string {
	if len(t.Failures) == 0 {
		return "failing tests"
	}
	names := t.Failures[0].Test
	if n := len(t.Failures); n > 1 {
		names += fmt.Sprintf(" and %d more", n-1)
	}
	return names
}

// Gate verdicts.
const (
	GatePass   = "pass"
	GateFail   = "fail"
	GateNotRun = "not_run" // the gate could not run (no model configured, …): never a pass
)

// Gate is one check's verdict on a candidate patch, shown as evidence in the
// pull request.
type Gate struct {
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail,omitempty"`
	// Elapsed is how long the gate took, in milliseconds.
	ElapsedMS int64 `json:"elapsed_ms,omitempty"`
}

// Passed reports whether every gate passed. A gate that did not run is not a
// pass, unless it is named in optional.
func Passed(gates []Gate, optional ...string) bool {
	for _, g := range gates {
		if g.Verdict == GatePass {
			continue
		}
		if g.Verdict == GateNotRun && slices.Contains(optional, g.Name) {
			continue
		}
		return false
	}
	return true
}

// GateJudge is the gate where a model reviews the patch (pkg/judge).
const GateJudge = "judge"

// Reviewed reports whether a model reviewed the patch and passed it: its
// judge gate ran and passed. A patch no model reviewed (the offline
// policy's, a run without a judge) is marked unreviewed wherever it is
// shown: a draft pull request with the unreviewed label and a notice at
// the top of its body, and a line in worker repair's report.
func Reviewed(gates []Gate) bool {
	for _, g := range gates {
		if g.Name == GateJudge {
			return g.Verdict == GatePass
		}
	}
	return false
}

// Round verdicts: how one round of a candidate ended.
const (
	RoundAccepted  = "accepted"   // every gate passed
	RoundRejected  = "rejected"   // a gate failed it
	RoundTestsFail = "tests_fail" // the agent's change does not pass the failing tests
	RoundNoChange  = "no_change"  // the agent changed nothing
	RoundError     = "error"      // the machinery failed (the agent, the gates)
)

// Round is one round of one candidate: the agent's first episode, or a
// feedback round in which it got a rejection's evidence back and revised
// its change; and what became of it.
type Round struct {
	// Attempt is the job's delivery that ran it (1-based; 0 outside the
	// queue), Candidate the candidate (1-based) and N the round (1: the
	// first episode, 2 and on: feedback rounds).
	Attempt   int `json:"attempt,omitempty"`
	Candidate int `json:"candidate"`
	N         int `json:"round"`
	// Steps are the round's own steps; Stop why its episode ended.
	Steps   int    `json:"steps"`
	Stop    string `json:"stop,omitempty"`
	Verdict string `json:"verdict"`
	// PatchesTested are the candidate patches the round's episode tested,
	// TriedBefore those of them tested before its final patch
	// (harness.Result).
	PatchesTested int `json:"patches_tested,omitempty"`
	TriedBefore   int `json:"tried_before,omitempty"`
	// Reason says in one line why it was not accepted.
	Reason string `json:"reason,omitempty"`
	// Gates are the verdicts on its patch (none when no gate ran).
	Gates []Gate `json:"gates,omitempty"`
	Patch string `json:"patch,omitempty"`
	// Trajectory is the round's steps, one JSON object per line (the
	// feedback round's first line brings the gates' evidence back).
	Trajectory string `json:"trajectory,omitempty"`
}

// Rejected names the gates that failed the round.
func (r Round) Rejected() []string {
	var names []string
	for _, g := range r.Gates {
		if g.Verdict == GateFail {
			names = append(names, g.Name)
		}
	}
	return names
}

// MergeFailures is failures with those of more that it lacks appended, in
// their order (a failure is known by its test ID).
func MergeFailures(failures, more []Failure) []Failure {
	have := make(map[string]bool, len(failures))
	for _, f := range failures {
		have[f.ID()] = true
	}
	out := failures[:len(failures):len(failures)] // appends never write into the caller's array
	for _, f := range more {
		if !have[f.ID()] {
			have[f.ID()] = true
			out = append(out, f)
		}
	}
	return out
}
