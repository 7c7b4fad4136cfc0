package harness

import (
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

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
