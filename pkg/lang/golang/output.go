package golang

import (
	"go/build"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// TestOutput reads a failing test's output as go test prints it
// (report.OutputReader): the message is a panic's first line, or the
// failing assertion's ("x_test.go:12: message"), or the first line that is
// not go test's own; the frames are the .go locations it names, the
// toolchain's own files left out. A JUnit report's case is read so when
// its output shows go test (showsGoTest), whichever tool wrote the report.
type TestOutput struct{}

func init() { report.RegisterOutputReader(TestOutput{}) }

// ReadOutput reads f's output as go test's when it shows go test: any
// other output reads the same as any text (report.DescribeOutput), and is
// left to it.
func (TestOutput) ReadOutput(f *task.Failure, buildFailure bool) bool {
	if !showsGoTest(f.Output) {
		return false
	}
	if buildFailure {
		readBuild(f)
	} else {
		readTest(f)
	}
	return true
}

// showsGoTest reports output that go test's reading of differs from any
// text's (report.FirstLine, no frames): it names a .go location, holds a
// panic, or holds a line of go test's own.
func showsGoTest(output string) bool {
	if frameRE.MatchString(output) || panicText(output) != "" {
		return true
	}
	for _, l := range strings.Split(output, "\n") {
		if t := strings.TrimSpace(l); goTestLine(t) && !report.Omission(t) {
			return true
		}
	}
	return false
}

// describe caps a test failure's output and fills its message and frames
// from it.
func describe(f *task.Failure) {
	f.Output = report.CapOutput(f.Output)
	readTest(f)
}

// describeBuild caps a build failure's output and fills its message (the
// compiler's first error) and frames from it.
func describeBuild(f *task.Failure) {
	f.Output = report.CapOutput(f.Output)
	readBuild(f)
}

// readTest fills a test failure's frames and, when it has none, its
// message from its output.
func readTest(f *task.Failure) {
	f.Frames = Frames(f.Output, 5)
	if f.Message == "" {
		f.Message = Message(f.Output)
	}
}

// readBuild fills a build failure's frames and, when it has none, its
// message from its output.
func readBuild(f *task.Failure) {
	f.Frames = frames(f.Output, 5)
	if f.Message == "" {
		f.Message = firstMessage(f.Output)
	}
}

var frameRE = regexp.MustCompile(`([\w./\-]+\.go):(\d+)`)

// locatedRE is a line of a test's log: "    file_test.go:12: message".
var locatedRE = regexp.MustCompile(`^\s*([\w./\-]+\.go):(\d+)(?::\d+)?: ?(.*)$`)

// Frames returns the source locations that say where a test failed: a
// panic's stack frames when it panicked (the innermost first), otherwise the
// failing assertion's location followed by the other locations the output
// names. The Go toolchain's own files are left out; n caps the count.
func Frames(output string, n int) []string {
	if p := panicText(output); p != "" {
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
	if p := panicText(output); p != "" {
		line, _, _ := strings.Cut(p, "\n")
		return report.CapMessage(strings.TrimSpace(line))
	}
	if _, msg := lastLocated(output); msg != "" {
		return report.CapMessage(msg)
	}
	for _, l := range strings.Split(output, "\n") {
		if t := strings.TrimSpace(l); t != "" && !goTestLine(t) {
			return report.CapMessage(t)
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
				return report.CapMessage(strings.TrimSpace(t[i+2:]))
			}
			return report.CapMessage(t)
		}
	}
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !goTestLine(t) {
			return report.CapMessage(t)
		}
	}
	return ""
}

// goTestLine is a line go test prints around a test's own output.
func goTestLine(t string) bool {
	return strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "FAIL\t") || t == "FAIL" ||
		report.Omission(t)
}

// panicText is the panic and everything after it in a test's output ("panic:
// " at a line's start), or "" when the output holds none.
func panicText(out string) string {
	if strings.HasPrefix(out, "panic: ") {
		return out
	}
	if i := strings.Index(out, "\npanic: "); i >= 0 {
		return out[i+1:]
	}
	return ""
}
