// Package report turns test reports (go test -json, JUnit XML) into the
// failures redfix works on. A report that does not parse is an error that
// says why; a report with no failures is a valid, empty result.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/task"
)

// Result is what a report says.
type Result struct {
	Format   string         `json:"format"` // "go-test-json" or "junit"
	Total    int            `json:"total"`
	Passed   []string       `json:"passed,omitempty"` // test IDs
	Failures []task.Failure `json:"failures,omitempty"`
	// BuildErrors are packages that did not compile, with their output.
	BuildErrors []task.Failure `json:"build_errors,omitempty"`
}

// Failed reports whether anything failed, tests or builds.
func (r Result) Failed() bool { return len(r.Failures) > 0 || len(r.BuildErrors) > 0 }

// ErrEmpty is returned for a report with no content at all.
var ErrEmpty = errors.New("report is empty")

// Parse detects the report's format and parses it.
func Parse(data []byte) (Result, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return Result{}, ErrEmpty
	case trimmed[0] == '<':
		return ParseJUnit(bytes.NewReader(trimmed))
	case trimmed[0] == '{':
		return ParseGoTestJSON(bytes.NewReader(trimmed))
	}
	return Result{}, fmt.Errorf("unknown report format: want go test -json or JUnit XML, got text starting %q", head(trimmed, 40))
}

func head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// maxOutput caps the output kept for one failure, in characters.
const maxOutput = 16 << 10

var frameRE = regexp.MustCompile(`([\w./\-]+\.go):(\d+)`)

// describe fills a failure's message and frames from its output.
func describe(f *task.Failure) {
	f.Output = clip.Middle(f.Output, maxOutput)
	f.Frames = Frames(f.Output, 5)
	if f.Message == "" {
		f.Message = Message(f.Output)
	}
}

// Frames returns the first n distinct file:line locations in output, the
// test framework's and the runtime's left out.
func Frames(output string, n int) []string {
	var frames []string
	seen := map[string]bool{}
	for _, m := range frameRE.FindAllStringSubmatch(output, -1) {
		loc := m[1] + ":" + m[2]
		if seen[loc] || strings.Contains(m[1], "/src/testing/") || strings.Contains(m[1], "/src/runtime/") {
			continue
		}
		seen[loc] = true
		frames = append(frames, loc)
		if len(frames) == n {
			break
		}
	}
	return frames
}

// Message picks the line of output that says what went wrong: a panic, or
// the first "file.go:N: message" line of the test log.
func Message(output string) string {
	lines := strings.Split(output, "\n")
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "panic:") {
			return t
		}
	}
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || t == "" {
			continue
		}
		if frameRE.MatchString(t) {
			if i := strings.Index(t, ": "); i >= 0 {
				return strings.TrimSpace(t[i+2:])
			}
			return t
		}
	}
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- ") {
			return t
		}
	}
	return ""
}
