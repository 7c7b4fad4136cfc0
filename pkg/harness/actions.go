package harness

import "encoding/json"

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
