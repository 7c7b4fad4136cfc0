// Package report turns test reports (JUnit XML, and the formats the
// language drivers register) into the failures redfix works on. A report
// that does not parse is an error that says why; a report with no failures
// is a valid, empty result.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/task"
)

// Result is what a report says.
type Result struct {
	Format string   `json:"format"` // "junit", or a registered Format's name
	Total  int      `json:"total"`
	Passed []string `json:"passed,omitempty"` // test IDs
	// Skipped are the tests that were skipped (JUnit's <skipped>, which
	// pytest also writes for an expected failure; go test's skips): they
	// ran, and neither passed nor failed. Like Runs, not carried in JSON.
	Skipped  []string       `json:"-"`
	Failures []task.Failure `json:"failures,omitempty"`
	// BuildErrors are packages that did not compile, with their output.
	BuildErrors []task.Failure `json:"build_errors,omitempty"`
	// NotRun are tests that started and never ended, without being the
	// cause: paused when a panic ended their binary, or cut off with it.
	NotRun []string `json:"not_run,omitempty"`
	// Incomplete are packages whose run has no final result: the stream
	// ended before them (go test was killed, or the report is cut).
	Incomplete []string `json:"incomplete,omitempty"`
	// Runs counts each test's runs by outcome (go test -count runs each
	// test several times). Not kept for JUnit.
	Runs map[string]Runs `json:"-"`
}

// Runs counts one test's runs by outcome.
type Runs struct{ Pass, Fail, Skip int }

// Failed reports whether anything failed, tests or builds.
func (r Result) Failed() bool { return len(r.Failures) > 0 || len(r.BuildErrors) > 0 }

// ErrEmpty is returned for a report with no content at all.
var ErrEmpty = errors.New("report is empty")

// Parse detects the report's format and parses it: JUnit XML, or a format
// a driver registered (RegisterFormat).
func Parse(data []byte) (Result, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return Result{}, ErrEmpty
	case trimmed[0] == '<':
		return ParseJUnit(bytes.NewReader(trimmed))
	}
	if f := sniff(trimmed); f != nil {
		return f.Parse(bytes.NewReader(trimmed))
	}
	return Result{}, fmt.Errorf("unknown report format: want %s, got text starting %q", wanted(), head(trimmed, 40))
}

func head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// maxOutput caps the output kept for one failure, in characters.
const maxOutput = 16 << 10

// maxMessage caps a failure's message, in characters.
const maxMessage = 600

// CapMessage caps a failure's message: its middle is left out of a long one.
func CapMessage(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return clip.Middle(s, maxMessage)
}

// Relativize rewrites a failure seen in a checkout at root so that every
// path in it is relative to root: the absolute paths of stack frames lose
// the root, and the bare file names that testing prints ("x_test.go:12")
// gain the package's directory pkgDir ("pkg/x", or "." for the root).
// aliases are other spellings of root (its path with symlinks resolved).
func Relativize(f *task.Failure, pkgDir string, root string, aliases ...string) {
	roots := append([]string{root}, aliases...)
	strip := func(s string) string {
		for _, r := range roots {
			if r = strings.TrimSuffix(filepath.ToSlash(r), "/"); r != "" {
				s = strings.ReplaceAll(s, r+"/", "")
			}
		}
		return s
	}
	f.Output = strip(f.Output)
	f.Message = strip(f.Message)
	pkgDir = strings.TrimPrefix(filepath.ToSlash(pkgDir), "./")
	for i, fr := range f.Frames {
		fr = strip(fr)
		if !strings.Contains(fr, "/") && pkgDir != "" && pkgDir != "." {
			fr = pkgDir + "/" + fr
		}
		f.Frames[i] = fr
	}
}
