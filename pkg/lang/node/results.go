package node

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// maxReportBytes bounds a runner's report read back.
const maxReportBytes = report.MaxJUnitBytes

// jestReport is jest's --json report, which vitest's json reporter writes
// too, and redfix's mocha and node:test reporters imitate.
type jestReport struct {
	TestResults []struct {
		Name             string `json:"name"`
		Status           string `json:"status"`
		Message          string `json:"message"`
		AssertionResults []struct {
			AncestorTitles  []string `json:"ancestorTitles"`
			Title           string   `json:"title"`
			Status          string   `json:"status"`
			FailureMessages []string `json:"failureMessages"`
		} `json:"assertionResults"`
	} `json:"testResults"`
}

// results is what one invocation says, test by test, by canonical id.
type results struct {
	passed, skipped []string
	failed          []task.Failure // Package: the file; Test: the name
	build           []task.Failure // Package: the file that did not load
	files           []string       // the files the report names
	order           []string       // every test's id, in the report's order
}

// parseReport reads a report into results: test files are named relative
// to the checkout at dir (or one of its other spellings, aliases).
func parseReport(data []byte, dir string, aliases []string) (results, error) {
	var rep jestReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return results{}, err
	}
	var rs results
	for _, f := range rep.TestResults {
		file := relative(f.Name, dir, aliases)
		rs.files = append(rs.files, file)
		if len(f.AssertionResults) == 0 || (f.Status == "failed" && f.Message != "" && !anyFailed(f.AssertionResults)) {
			if f.Status == "failed" {
				b := task.Failure{Package: file, Output: f.Message}
				describeBuild(&b, dir, aliases)
				rs.build = append(rs.build, b)
			}
			continue
		}
		for _, a := range f.AssertionResults {
			name := strings.Join(append(append([]string(nil), a.AncestorTitles...), a.Title), " > ")
			id := file + "::" + name
			rs.order = append(rs.order, id)
			switch a.Status {
			case "passed":
				rs.passed = append(rs.passed, id)
			case "failed":
				fl := task.Failure{Package: file, Test: name, Output: strings.Join(a.FailureMessages, "\n")}
				describeFailure(&fl, dir, aliases)
				rs.failed = append(rs.failed, fl)
			default: // pending, skipped, todo, disabled
				rs.skipped = append(rs.skipped, id)
			}
		}
	}
	return rs, nil
}

func anyFailed(as []struct {
	AncestorTitles  []string `json:"ancestorTitles"`
	Title           string   `json:"title"`
	Status          string   `json:"status"`
	FailureMessages []string `json:"failureMessages"`
}) bool {
	for _, a := range as {
		if a.Status == "failed" {
			return true
		}
	}
	return false
}

// relative is a path a runner reported (absolute, or a file: URL) relative
// to the checkout.
func relative(p, dir string, aliases []string) string {
	p = strings.TrimPrefix(p, "file://")
	for _, root := range append([]string{dir}, aliases...) {
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(root, "/")+"/"); ok {
			return rest
		}
	}
	return filepath.ToSlash(p)
}

func aliasesOf(dir string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		return []string{real}
	}
	return nil
}

// maxFrames bounds the frames kept of a failure; maxMessage a message's
// characters; maxFailureOutput a failure's output.
const (
	maxFrames        = 5
	maxMessage       = 600
	maxFailureOutput = 16 << 10
)

// ansiRE is a terminal colour sequence.
var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// describeFailure makes a failing test's stack say what the agent needs:
// the message is the error's (its type left out when it is a plain Error
// or AssertionError, as the runners' JUnit reports say it), with jest's
// Expected and Received lines; the frames are the stack's locations in the
// checkout, innermost first (the runners map TypeScript's frames to its
// source); paths are relative to the checkout.
func describeFailure(f *task.Failure, dir string, aliases []string) {
	f.Output = clip.Middle(ansiRE.ReplaceAllString(f.Output, ""), maxFailureOutput)
	f.Frames = frames(f.Output, dir, aliases)
	report.Relativize(f, ".", dir, aliases...)
	f.Message = clip.Middle(message(f.Output), maxMessage)
}

// describeBuild does the same for a test file that did not load: a syntax
// error, a module not found, a type the transform rejects.
func describeBuild(f *task.Failure, dir string, aliases []string) {
	f.Test = ""
	f.Output = clip.Middle(ansiRE.ReplaceAllString(f.Output, ""), maxFailureOutput)
	f.Frames = frames(f.Output, dir, aliases)
	report.Relativize(f, ".", dir, aliases...)
	msg := ""
	for _, l := range strings.Split(f.Output, "\n") {
		t := strings.TrimSpace(l)
		if errorLineRE.MatchString(t) {
			msg = t
			break
		}
	}
	if msg == "" {
		msg = firstLine(f.Output)
	}
	f.Message = clip.Middle(msg, maxMessage)
}

// errorLineRE is an error's line: "SyntaxError: Unexpected token",
// "Error: Cannot find module './x'", "TypeError [ERR_X]: y".
var errorLineRE = regexp.MustCompile(`^[A-Za-z_$][\w$.]*(?: \[[A-Z_]+\])?: \S|^Cannot find module`)

// plainErrorRE is the type of an error that says nothing more than its
// message does.
var plainErrorRE = regexp.MustCompile(`^(?:Error|AssertionError)(?: \[[A-Z_]+\])?: `)

// stackLineRE is a stack frame's line.
var stackLineRE = regexp.MustCompile(`^\s+at `)

// message is an error's message from its stack: the lines before the
// first frame, its first line, the next when the first ends with a colon
// ("Expected values to be strictly equal:" then "2 !== 3"), and jest's
// Expected and Received lines, joined with "; ".
func message(stack string) string {
	var lines []string
	for _, l := range strings.Split(stack, "\n") {
		if stackLineRE.MatchString(l) {
			break
		}
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	first := plainErrorRE.ReplaceAllString(lines[0], "")
	parts := []string{first}
	for i, l := range lines[1:] {
		if i == 0 && strings.HasSuffix(first, ":") {
			parts = append(parts, l)
			continue
		}
		if strings.HasPrefix(l, "Expected") || strings.HasPrefix(l, "Received") {
			parts = append(parts, l)
		}
	}
	if len(parts) > 1 && strings.HasSuffix(parts[0], ":") {
		return parts[0] + " " + strings.Join(parts[1:], "; ")
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// frameRE is a stack frame's location: "at fn (/abs/src/x.ts:10:35)",
// "at /abs/src/x.ts:10:35", "at file:///abs/x.mjs:3:1", or jest's
// relative "at Object.toBe (src/x.test.js:9:69)".
var frameRE = regexp.MustCompile(`^\s+at (?:.*? \()?(?:file://)?([^():\s][^():]*?):(\d+):\d+\)?\s*$`)

// frames are the stack's locations in the checkout, innermost first, at
// most maxFrames: node's internals and installed packages are left out.
func frames(out, dir string, aliases []string) []string {
	var locs []string
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		m := frameRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		p := m[1]
		if strings.HasPrefix(p, "node:") || strings.HasPrefix(p, "<") {
			continue
		}
		if filepath.IsAbs(p) {
			rel := relative(p, dir, aliases)
			if filepath.IsAbs(rel) {
				continue
			}
			p = rel
		}
		if strings.HasPrefix(p, "../") || strings.Contains(p, "node_modules/") {
			continue
		}
		loc := p + ":" + m[2]
		if !seen[loc] {
			seen[loc] = true
			locs = append(locs, loc)
			if len(locs) == maxFrames {
				break
			}
		}
	}
	return locs
}
