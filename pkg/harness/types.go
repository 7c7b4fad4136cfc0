// Package harness runs the agent: a ReAct loop in which a policy chooses one
// action at a time among fifteen tools, each action's observation is recorded
// and fed back, and the run ends with a candidate patch and its trajectory.
package harness

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redfix/redfix/pkg/llm"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// The fifteen actions.
const (
	ActExit                = "exit"
	ActGetDiffDetails      = "get_diff_details"
	ActGetTaskDetails      = "get_task_details"
	ActReadDirectory       = "read_directory"
	ActReadFile            = "read_file"
	ActFindFile            = "find_file"
	ActGoToLine            = "go_to_line"
	ActSearchCode          = "search_code"
	ActSearchCodeInFile    = "search_code_in_file"
	ActSearchClass         = "search_class"
	ActSearchMethod        = "search_method"
	ActSearchMethodInFile  = "search_method_in_file"
	ActSearchMethodInClass = "search_method_in_class"
	ActRunTests            = "run_tests"
	ActEdit                = "edit"
)

// Arguments of the actions, as JSON objects. Policies marshal these into
// Action.Args; tools unmarshal them. Empty fields take the documented default.
type (
	ExitArgs struct {
		Summary string `json:"summary"`
	}
	// DiffArgs: Commit defaults to the task's blame commit.
	DiffArgs struct {
		Commit string `json:"commit,omitempty"`
	}
	PathArgs struct {
		Path string `json:"path"`
	}
	// ReadFileArgs: lines are 1-based and inclusive; 0 means the file's
	// start or end.
	ReadFileArgs struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line,omitempty"`
		EndLine   int    `json:"end_line,omitempty"`
	}
	FindFileArgs struct {
		Pattern string `json:"pattern"`
	}
	GoToLineArgs struct {
		Path string `json:"path"`
		Line int    `json:"line"`
	}
	SearchCodeArgs struct {
		Query string `json:"query"`
		Regex bool   `json:"regex,omitempty"`
		Path  string `json:"path,omitempty"` // search_code_in_file only
	}
	NameArgs struct {
		Name  string `json:"name"`
		Path  string `json:"path,omitempty"`  // search_method_in_file
		Class string `json:"class,omitempty"` // search_method_in_class
	}
	// RunTestsArgs: Tests are test ids or packages ("./...", "./cmd/x",
	// an import path); they default to the task's failing (oracle) tests.
	// List lists the tests of the packages (by default those of the
	// failing tests) without running them.
	//
	// Localize ranks the lines the tests run instead of reporting their
	// results: spectrum-based fault localization over the coverage of the
	// failing tests and of their packages' other tests.
	RunTestsArgs struct {
		Tests    []string `json:"tests,omitempty"`
		List     bool     `json:"list,omitempty"`
		Localize bool     `json:"localize,omitempty"`
	}
	// EditArgs: either Blocks (SEARCH/REPLACE blocks, applied as given) or
	// Instructions (natural language, turned into blocks by the patcher).
	EditArgs struct {
		Path         string `json:"path"`
		Instructions string `json:"instructions,omitempty"`
		Blocks       string `json:"blocks,omitempty"`
	}
)

// Action is one step the policy takes.
type Action struct {
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args,omitempty"`
	Thought string          `json:"thought,omitempty"`
	// CallID is the model's tool-call id, for policies that need it back.
	CallID string `json:"call_id,omitempty"`
}

// NewAction marshals args into an action.
func NewAction(name, thought string, args any) Action {
	a := Action{Name: name, Thought: thought}
	if args != nil {
		a.Args, _ = json.Marshal(args)
	}
	return a
}

// Observation is what an action returned. IsError marks a problem the policy
// can act on (a bad path, an edit that did not apply, a failing test run);
// infrastructure failures are Go errors, not observations.
type Observation struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Tests is set by run_tests.
	Tests *TestsResult `json:"tests,omitempty"`
	// Edit is set by edit.
	Edit *EditResult `json:"edit,omitempty"`
}

// TestsResult is run_tests' structured result.
type TestsResult struct {
	OK     bool           `json:"ok"`
	Passed []string       `json:"passed,omitempty"`
	Failed []task.Failure `json:"failed,omitempty"`
	Build  []task.Failure `json:"build,omitempty"`
	// NotRun are tests that started and never ended (paused when a panic
	// ended their binary): not failures.
	NotRun []string `json:"not_run,omitempty"`
	// Unknown says which names no package defines.
	Unknown []string `json:"unknown,omitempty"`
	// Suspects are the lines run_tests with localize ranked.
	Suspects []testrun.Suspect `json:"suspects,omitempty"`
}

// EditResult is edit's structured result.
type EditResult struct {
	Applied bool   `json:"applied"`
	Diff    string `json:"diff,omitempty"`
	// Diagnostics are the static-analysis findings after the edit (build,
	// vet, gofmt); empty when clean.
	Diagnostics string `json:"diagnostics,omitempty"`
}

// Step is one line of the trajectory.
type Step struct {
	N           int         `json:"step"`
	Policy      string      `json:"policy"`
	Action      Action      `json:"action"`
	Observation Observation `json:"observation"`
	Started     time.Time   `json:"started"`
	ElapsedMS   int64       `json:"elapsed_ms"`
	// Spend is what the step's model calls (the policy's, the patcher's)
	// used and cost; absent when it made none.
	Spend *llm.Spend `json:"spend,omitempty"`
}

// ToolSpec describes a tool to a policy (an LLM's function definition).
type ToolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"` // a JSON Schema object
}

// Episode is what a policy sees: the task, the tools, and every step so far.
type Episode struct {
	Task     task.Task
	Tools    []ToolSpec
	Steps    []Step
	MaxSteps int
}

// Policy chooses the next action.
type Policy interface {
	Name() string
	Next(ctx context.Context, ep *Episode) (Action, error)
}

// Patcher turns natural-language edit instructions into SEARCH/REPLACE
// blocks for one file (the edit action's sub-agent).
type Patcher interface {
	Blocks(ctx context.Context, path, content, instructions string) (string, error)
}

// TestRunner runs tests in a checkout; testrun.Runner is one.
type TestRunner interface {
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
	RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
	List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error)
	Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error)
}

// Result is how an episode ended.
type Result struct {
	// Patch is the workspace's diff against the task's commit; empty when
	// the agent changed nothing.
	Patch   string `json:"patch"`
	Summary string `json:"summary"`
	Steps   int    `json:"steps"`
	// Stop is why the loop ended: "exit", "budget", "repeated", "policy".
	Stop string `json:"stop"`
	// TestsPassed reports whether the last run_tests of the oracle tests
	// passed with the patch as it stands.
	TestsPassed bool `json:"tests_passed"`
	// KeptPassing: a budget ended the episode after the agent changed a
	// state that passed; Patch is that state, restored in the workspace.
	KeptPassing bool `json:"kept_passing,omitempty"`
	// Edits and EditFailures count edit actions, and those that did not
	// apply (a SEARCH that matched nothing, a bad block).
	Edits        int `json:"edits"`
	EditFailures int `json:"edit_failures"`
	// Spend is what the episode's model calls used and cost.
	Spend llm.Spend `json:"spend"`
	// History is every step of the episode, earlier rounds' included, for
	// a feedback round to continue from.
	History []Step `json:"-"`
}
