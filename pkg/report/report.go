// Package report turns test reports (JUnit XML, and the formats the
// language drivers register) into the failures redfix works on. A report
// that does not parse is an error that says why; a report with no failures
// is a valid, empty result.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"path/filepath"
	"regexp"
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

var frameRE = regexp.MustCompile(`([\w./\-]+\.go):(\d+)`)

// locatedRE is a line of a test's log: "    file_test.go:12: message".
var locatedRE = regexp.MustCompile(`^\s*([\w./\-]+\.go):(\d+)(?::\d+)?: ?(.*)$`)

// Describe fills a test failure's message and frames from its output.
func Describe(f *task.Failure) {
	f.Output = clip.Middle(f.Output, maxOutput)
	f.Frames = Frames(f.Output, 5)
	if f.Message == "" {
		f.Message = Message(f.Output)
	}
}

// DescribeBuild fills a build failure's message (the compiler's first
// error) and frames from its output.
func DescribeBuild(f *task.Failure) {
	f.Output = clip.Middle(f.Output, maxOutput)
	f.Frames = frames(f.Output, 5)
	if f.Message == "" {
		f.Message = firstMessage(f.Output)
	}
}

// Frames returns the source locations that say where a test failed: a
// panic's stack frames when it panicked (the innermost first), otherwise the
// failing assertion's location followed by the other locations the output
// names. The Go toolchain's own files are left out; n caps the count.
func Frames(output string, n int) []string {
	if p := PanicText(output); p != "" {
		return frames(p, n)
	}
	var first []string
	if loc, _ := lastLocated(output); loc != "" {
		first = append(first, loc)
	}
	return frames(strings.Join(first, "\n")+"\n"+output, n)
}

func frames(output string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range frameRE.FindAllStringSubmatch(output, -1) {
		loc := m[1] + ":" + m[2]
		if seen[loc] || toolchainFile(m[1]) {
			continue
		}
		seen[loc] = true
		out = append(out, loc)
		if len(out) == n {
			break
		}
	}
	return out
}

var goroot = strings.TrimSuffix(filepath.ToSlash(build.Default.GOROOT), "/") + "/"

func toolchainFile(path string) bool {
	return strings.Contains(path, "/src/testing/") || strings.Contains(path, "/src/runtime/") ||
		(goroot != "/" && strings.HasPrefix(path, goroot)) || path == "_testmain.go"
}

// Message says what went wrong in a test's output: a panic's first line;
// otherwise the failing assertion's message, which is the last logged
// message before go test's "--- FAIL" line (the lines logged before it stay
// in the output); otherwise the first line that is not go test's own.
func Message(output string) string {
	if p := PanicText(output); p != "" {
		line, _, _ := strings.Cut(p, "\n")
		return CapMessage(strings.TrimSpace(line))
	}
	if _, msg := lastLocated(output); msg != "" {
		return CapMessage(msg)
	}
	for _, l := range strings.Split(output, "\n") {
		if t := strings.TrimSpace(l); t != "" && !goTestLine(t) {
			return CapMessage(t)
		}
	}
	return ""
}

// lastLocated finds the last "file.go:N: message" line before the first
// "--- FAIL" line of output (all of output when there is none), and returns
// its location and message. A message that is empty on its own line (as
// testify prints them) is taken from the indented lines that follow.
func lastLocated(output string) (loc, msg string) {
	lines := strings.Split(output, "\n")
	end := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "--- FAIL") {
			end = i
			break
		}
	}
	for i := end - 1; i >= 0; i-- {
		m := locatedRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		msg = strings.TrimSpace(m[3])
		if msg == "" {
			msg = continuation(lines[i+1 : end])
		}
		if msg == "" {
			continue
		}
		return m[1] + ":" + m[2], msg
	}
	return "", ""
}

// continuation picks the message from the indented lines after an empty
// located line: testify's "Error:" line when there is one, or the first.
func continuation(lines []string) string {
	first := ""
	for _, l := range lines {
		if locatedRE.MatchString(l) || !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") {
			break
		}
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(t, "Error:"); ok {
			return strings.TrimSpace(rest)
		}
		if first == "" && !strings.HasPrefix(t, "Error Trace:") {
			first = t
		}
	}
	return first
}

// firstMessage is the first "file.go:N: message" line of a compiler's
// output, or its first line.
func firstMessage(output string) string {
	lines := strings.Split(output, "\n")
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if goTestLine(t) || t == "" {
			continue
		}
		if frameRE.MatchString(t) {
			if i := strings.Index(t, ": "); i >= 0 {
				return CapMessage(strings.TrimSpace(t[i+2:]))
			}
			return CapMessage(t)
		}
	}
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !goTestLine(t) {
			return CapMessage(t)
		}
	}
	return ""
}

// goTestLine is a line go test prints around a test's own output.
func goTestLine(t string) bool {
	return strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "FAIL\t") || t == "FAIL" ||
		strings.HasPrefix(t, "[… ")
}

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

// PanicText is the panic and everything after it in a test's output ("panic:
// " at a line's start), or "" when the output holds none.
func PanicText(out string) string {
	if strings.HasPrefix(out, "panic: ") {
		return out
	}
	if i := strings.Index(out, "\npanic: "); i >= 0 {
		return out[i+1:]
	}
	return ""
}
