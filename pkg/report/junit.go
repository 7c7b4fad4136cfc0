package report

import (
	"bytes"
	"fmt"
	"io"
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
		if pkg == "" {
			pkg = s.Name
		}
		switch tc.Status {
		case junit.StatusPassed:
			res.Total++
			res.Passed = append(res.Passed, task.Failure{Package: pkg, Test: tc.Name}.ID())
		case junit.StatusSkipped:
			res.Total++
		case junit.StatusFailed, junit.StatusError:
			f := junitFailure(pkg, tc)
			if tc.Name == "[build failed]" {
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

func junitFailure(pkg string, tc junit.Test) task.Failure {
	f := task.Failure{Package: pkg, Test: tc.Name}
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
	for _, part := range []string{body, tc.SystemOut, tc.SystemErr} {
		if strings.TrimSpace(part) == "" {
			continue
		}
		out.WriteString(strings.TrimRight(part, "\n"))
		out.WriteString("\n")
	}
	f.Output = out.String()
	if tc.Name == "[build failed]" {
		DescribeBuild(&f)
	} else {
		describe(&f)
	}
	return f
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
