package report

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	junit "github.com/joshdk/go-junit"

	"github.com/redfix/redfix/pkg/task"
)

// ParseJUnit parses JUnit XML: a <testsuites> document, a bare <testsuite>,
// or several suites one after the other, nested suites included.
//
// A testcase's classname is the failure's Package (the enclosing suite's
// name when the classname is empty) and its name the Test. The message
// attribute of <failure> or <error> is the Message, unless it is missing or
// says nothing ("Failed", "error", …), in which case the message is picked
// from the element's body. The body, followed by the testcase's system-out
// and system-err, is the Output. A testcase named "[build failed]" (how
// go-junit-report writes a package that did not compile) is a build error.
//
// Totals are counted here from the testcases: suites' own counts are
// ignored, they are often stale for nested suites.
//
// The runners' dialects: Surefire and pytest (classname is the class or
// module; <error> for exceptions and failed setups, Kind "error"), jest-junit
// (classname and name are both "suite title": the suite's name becomes the
// Package), gotestsum (a package that does not compile is a failing
// "TestMain" whose output is compiler errors: a build error). A suite's own
// system-out and system-err are added to its failures' output. Frames are
// read from Go, Java, Kotlin, Python, JavaScript and TypeScript traces.
func ParseJUnit(r io.Reader) (Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Result{}, fmt.Errorf("parse junit: read: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Result{}, fmt.Errorf("parse junit: %w", ErrEmpty)
	}
	suites, err := junit.Ingest(data)
	if err != nil {
		return Result{}, fmt.Errorf("parse junit: malformed XML: %w", err)
	}
	if len(suites) == 0 {
		return Result{}, fmt.Errorf("parse junit: no <testsuite> element (is this JUnit XML?)")
	}
	res := Result{Format: "junit"}
	for _, s := range suites {
		addSuite(&res, s)
	}
	return res, nil
}

func addSuite(res *Result, s junit.Suite) {
	for _, tc := range s.Tests {
		pkg := tc.Classname
		if pkg == "" || (pkg == tc.Name && s.Name != "") {
			pkg = s.Name
		}
		switch tc.Status {
		case junit.StatusPassed:
			res.Total++
			res.Passed = append(res.Passed, task.Failure{Package: pkg, Test: tc.Name}.ID())
		case junit.StatusSkipped:
			res.Total++
		case junit.StatusFailed, junit.StatusError:
			f := junitFailure(pkg, tc, s)
			if tc.Name == "[build failed]" || compileFailure(tc, f.Output) {
				f.Test = ""
				res.BuildErrors = append(res.BuildErrors, f)
				continue
			}
			res.Total++
			res.Failures = append(res.Failures, f)
		}
	}
	for _, nested := range s.Suites {
		addSuite(res, nested)
	}
}

func junitFailure(pkg string, tc junit.Test, s junit.Suite) task.Failure {
	f := task.Failure{Package: pkg, Test: tc.Name}
	if tc.Status == junit.StatusError {
		f.Kind = "error"
	}
	var body string
	// junit.Error.Error() prefers the body over the message attribute: read
	// the fields themselves.
	if e, ok := tc.Error.(junit.Error); ok {
		body = e.Body
		if informative(e.Message) {
			f.Message = strings.TrimSpace(e.Message)
		}
		if f.Message == "" && strings.TrimSpace(body) == "" && e.Type != "" {
			f.Message = e.Type
		}
	} else if informative(tc.Message) {
		f.Message = strings.TrimSpace(tc.Message)
	}
	var out strings.Builder
	for _, part := range []string{body, tc.SystemOut, tc.SystemErr, s.SystemOut, s.SystemErr} {
		if strings.TrimSpace(part) == "" {
			continue
		}
		out.WriteString(strings.TrimRight(part, "\n"))
		out.WriteString("\n")
	}
	f.Output = out.String()
	if tc.Name == "[build failed]" || compileFailure(tc, f.Output) {
		DescribeBuild(&f)
	} else {
		describe(&f)
	}
	if len(f.Frames) == 0 {
		f.Frames = traceFrames(f.Output)
	}
	return f
}

// compileErrorRE is a line of the Go compiler's output: "pay/pay.go:12:2: msg".
var compileErrorRE = regexp.MustCompile(`(?m)^\S+\.go:\d+:\d+: \S`)

// compileFailure recognizes gotestsum's report of a package that did not
// compile: a failing TestMain whose output is compiler errors, not a run.
func compileFailure(tc junit.Test, output string) bool {
	return tc.Name == "TestMain" && compileErrorRE.MatchString(output) && !strings.Contains(output, "=== RUN")
}

// traceFrameRE is a source location in another language's trace: Java's
// "(CartTest.java:42)", Python's "tests/test_x.py:14", JavaScript's
// "(/src/Cart.test.js:21:30)".
var traceFrameRE = regexp.MustCompile(`([\w./\-]+\.(?:java|kt|scala|py|js|jsx|mjs|cjs|ts|tsx|rb|cs)):(\d+)`)

// maxTraceFrames bounds the frames kept from a trace.
const maxTraceFrames = 5

// traceFrames are the distinct source locations of a trace, in order,
// without runtime-internal ones (node:internal, site-packages).
func traceFrames(output string) []string {
	var frames []string
	seen := map[string]bool{}
	for _, m := range traceFrameRE.FindAllStringSubmatch(output, -1) {
		file := m[1]
		if strings.Contains(file, "node_modules/") || strings.Contains(file, "site-packages/") || strings.HasPrefix(file, "internal/") {
			continue
		}
		fr := file + ":" + m[2]
		if seen[fr] {
			continue
		}
		seen[fr] = true
		frames = append(frames, fr)
		if len(frames) == maxTraceFrames {
			break
		}
	}
	return frames
}

// informative reports whether a failure's message attribute says more than
// that the test failed; go-junit-report, for one, writes message="Failed".
func informative(msg string) bool {
	switch strings.ToLower(strings.TrimSpace(msg)) {
	case "", "failed", "failure", "fail", "error", "build error", "test failed":
		return false
	}
	return true
}
