// Package bench measures redfix on a repository's own history: Mine finds
// past bug fixes whose tests fail without them, and Run replays each as a
// task (the old code plus the fix's tests) through the agent and the gates,
// without publishing, scoring every patch by re-running the tests on a clean
// copy.
package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Task is one line of a tasks file: a repository at a commit where some
// tests fail, optionally with a patch of tests to apply first, and the fix
// a person made (kept for scoring, never shown to the agent).
type Task struct {
	// ID names the task in results and reports; unique within a file.
	ID string `json:"id"`
	// Repo is the repository: a local path or a URL git can fetch from.
	Repo string `json:"repo"`
	// Base is the commit the task starts from: for a mined task, the fix's
	// parent (the old code).
	Base string `json:"base"`
	// TestPatch, when set, is a unified diff applied onto Base before the
	// agent starts: the fix's tests. It changes only test files.
	TestPatch string `json:"test_patch,omitempty"`
	// Tests are the failing tests, as the repository's driver names them
	// (Go: `import/path.TestName`, or a bare `TestName` when one package
	// defines it; Python: pytest's node id, `tests/test_x.py::test_y[p]`);
	// they must fail at Base plus TestPatch.
	Tests []string `json:"tests"`
	// Packages are the failing tests' packages (Go: import paths; Python:
	// test files); their other tests must keep passing. Empty: the
	// packages of Tests.
	Packages []string `json:"packages,omitempty"`
	// KnownFailures are tests of Packages that fail even with the fix;
	// scoring does not count them against a patch.
	KnownFailures []string `json:"known_failures,omitempty"`
	// Blame, when set, is the commit that broke the tests, as triage's
	// bisection names it: the agent is shown it, and the revert gate
	// checks against it. Mined fixes have none (their bug may be old).
	Blame string `json:"blame,omitempty"`
	// Good, instead of Blame, is a commit where the tests pass (CI's last
	// green run): bench bisects from it to Base as triage does, and the
	// agent is shown the commit the bisection blames. Not with TestPatch:
	// the tests must be in the history to be bisected.
	Good string `json:"good,omitempty"`
	// Golden is the fix's change to non-test files, for comparison only.
	Golden string `json:"golden_patch,omitempty"`
	// LinesChanged counts the golden patch's added and removed lines.
	LinesChanged int `json:"lines_changed,omitempty"`
	// Fix is the commit that fixed it, Subject its subject line.
	Fix     string `json:"fix,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Kind is a mined fix's kind as ClassifyChange tells it (KindFix,
	// KindFeature, KindUnsure), KindWhy its evidence.
	Kind    string   `json:"kind,omitempty"`
	KindWhy []string `json:"kind_why,omitempty"`
}

// Validate reports what a task lacks.
func (t Task) Validate() error {
	var missing []string
	if t.ID == "" {
		missing = append(missing, "id")
	}
	if t.Repo == "" {
		missing = append(missing, "repo")
	}
	if t.Base == "" {
		missing = append(missing, "base")
	}
	if len(t.Tests) == 0 {
		missing = append(missing, "tests")
	}
	if len(missing) > 0 {
		return fmt.Errorf("task %q: missing %s", t.ID, strings.Join(missing, ", "))
	}
	switch {
	case t.Good != "" && t.Blame != "":
		return fmt.Errorf("task %q: good and blame: name the blame, or the good commit to bisect from, not both", t.ID)
	case t.Good != "" && strings.TrimSpace(t.TestPatch) != "":
		return fmt.Errorf("task %q: good with a test_patch: the tests must be in the history to be bisected", t.ID)
	}
	return nil
}

// ReadTasks reads a tasks file: one JSON task a line; blank lines and lines
// starting with # are skipped. A malformed or incomplete line is an error
// naming its line; so is an ID used twice.
func ReadTasks(r io.Reader) ([]Task, error) {
	var tasks []Task
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var t Task
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if prev, ok := seen[t.ID]; ok {
			return nil, fmt.Errorf("line %d: task %q is also on line %d", n, t.ID, prev)
		}
		seen[t.ID] = n
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return tasks, nil
}

// ReadTasksFile is ReadTasks on a file; a missing file is no tasks.
func ReadTasksFile(path string) ([]Task, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tasks, err := ReadTasks(f)
	if err != nil {
		return nil, fmt.Errorf("read tasks %s: %w", path, err)
	}
	return tasks, nil
}

// WriteTasks writes a new tasks file with tasks; an existing file is
// refused.
func WriteTasks(path string, tasks []Task) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("write tasks: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, t := range tasks {
		if err := enc.Encode(t); err != nil {
			f.Close()
			return fmt.Errorf("write tasks %s: %w", path, err)
		}
	}
	return f.Close()
}

// appendLine appends v as one JSON line to path, synced to disk: a line is
// either whole or absent after a crash, so that a rerun resumes from it.
func appendLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}

// readLines decodes each whole JSON line of path with fn; a last line cut
// short by a crash is ignored. A missing file has no lines.
func readLines(path string, fn func([]byte) error) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := fn(line); err != nil {
			if i == len(lines)-1 {
				return nil // the torn last line of an interrupted write
			}
			return fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
	}
	return nil
}
