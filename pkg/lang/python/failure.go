package python

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// maxFrames bounds the frames kept of a failure.
const maxFrames = 5

// maxMessage bounds a failure's message, in characters.
const maxMessage = 600

// maxFailureOutput bounds a failure's output, in characters.
const maxFailureOutput = 16 << 10

// describeFailure makes a test's failure as read from pytest's JUnit report
// say what the agent needs: the message is the first line of pytest's own
// (the crash line of its short summary: "assert -1 == 5",
// "ZeroDivisionError: division by zero"); the frames are the traceback's
// locations in the checkout, innermost first (where the error was raised,
// then its callers out to the test); paths are relative to the checkout.
func describeFailure(f *task.Failure, dir string, aliases []string) {
	f.Output = tidy(f.Output)
	report.Relativize(f, ".", dir, aliases...)
	msg := firstLine(f.Message)
	if msg == "" {
		msg = lastErrorLine(f.Output)
	}
	f.Message = clip.Middle(msg, maxMessage)
	f.Frames = frames(f.Output, dir, aliases)
}

// describeBuild does the same for a file that did not collect: the message
// is the error's last line ("SyntaxError: invalid syntax",
// "ModuleNotFoundError: No module named 'x'").
func describeBuild(f *task.Failure, dir string, aliases []string) {
	f.Test = ""
	f.Output = clip.Middle(tidy(f.Output), maxFailureOutput)
	report.Relativize(f, ".", dir, aliases...)
	msg := lastErrorLine(f.Output)
	if msg == "" {
		msg = usageError(f.Output)
	}
	if msg == "" {
		msg = firstLine(f.Output)
	}
	f.Message = clip.Middle(msg, maxMessage)
	f.Frames = frames(f.Output, dir, aliases)
}

// usageErrorRE is argparse's complaint, as pytest prints it when its
// options (the repository's addopts among them) do not parse.
var usageErrorRE = regexp.MustCompile(`(?m)^\S+: (error: .+)$`)

// usageError is pytest's "error: unrecognized arguments: -x", "" when the
// output has none.
func usageError(out string) string {
	if m := usageErrorRE.FindStringSubmatch(out); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// lastErrorLine is the last of pytest's "E   " lines that is not source
// or a caret: the exception's type and message.
func lastErrorLine(out string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		rest, ok := strings.CutPrefix(lines[i], "E ")
		if !ok {
			continue
		}
		t := strings.TrimSpace(rest)
		if t == "" || strings.Trim(t, "^~ ") == "" || strings.HasPrefix(t, "File \"") {
			continue
		}
		if errorLineRE.MatchString(t) {
			return t
		}
	}
	return ""
}

// errorLineRE is an exception's line: "ValueError: bad", "AssertionError",
// "mod.CustomError: x", or a failed assert's.
var errorLineRE = regexp.MustCompile(`^[A-Za-z_][\w.]*(:\s|$)|^assert `)

// capturedRE is a section header pytest writes into a JUnit test case's
// system-out and system-err; an empty section is left out.
var capturedRE = regexp.MustCompile(`^-+ Captured (Log|Out|Err) -+$`)

// tidy drops the empty captured-output sections pytest writes for every
// failing test.
func tidy(out string) string {
	lines := strings.Split(out, "\n")
	var kept []string
	for i := 0; i < len(lines); i++ {
		if capturedRE.MatchString(strings.TrimSpace(lines[i])) {
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			if j == len(lines) || capturedRE.MatchString(strings.TrimSpace(lines[j])) {
				i = j - 1
				continue
			}
		}
		kept = append(kept, lines[i])
	}
	return strings.TrimRight(strings.Join(kept, "\n"), "\n") + "\n"
}

// pytestLocRE is a location line of pytest's traceback: "tests/test_x.py:12:
// AssertionError", "calc.py:5: in add"; pythonLocRE one of Python's own
// ("File "x.py", line 3"), which a syntax error's report has.
var (
	pytestLocRE = regexp.MustCompile(`(?m)^(\S[^:\n]*\.py):(\d+):(?: |$)`)
	pythonLocRE = regexp.MustCompile(`File "([^"\n]+\.py)", line (\d+)`)
)

// frames are the locations in the checkout that a traceback names,
// innermost first, at most maxFrames.
func frames(out, dir string, aliases []string) []string {
	roots := append([]string{dir}, aliases...)
	rel := func(p string) (string, bool) {
		for _, r := range roots {
			if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(r, "/")+"/"); ok {
				p = rest
				break
			}
		}
		if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "<") || strings.HasPrefix(p, "../") || strings.Contains(p, "site-packages/") {
			return "", false
		}
		return p, true
	}
	var locs []string
	for _, m := range pytestLocRE.FindAllStringSubmatch(out, -1) {
		if p, ok := rel(m[1]); ok {
			locs = append(locs, p+":"+m[2])
		}
	}
	// pytest prints the outermost call first.
	for i, j := 0, len(locs)-1; i < j; i, j = i+1, j-1 {
		locs[i], locs[j] = locs[j], locs[i]
	}
	for _, m := range pythonLocRE.FindAllStringSubmatch(out, -1) {
		if p, ok := rel(m[1]); ok {
			locs = append(locs, p+":"+m[2])
		}
	}
	var out2 []string
	seen := map[string]bool{}
	for _, l := range locs {
		if !seen[l] {
			seen[l] = true
			out2 = append(out2, l)
			if len(out2) == maxFrames {
				break
			}
		}
	}
	return out2
}
