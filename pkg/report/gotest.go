package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/redfix/redfix/pkg/task"
	"gotest.tools/gotestsum/testjson"
)

// ParseGoTestJSON parses the output of `go test -json`. Lines that are not
// JSON (a build error printed before the events) are kept as build output;
// a stream with no test event at all is rejected.
func ParseGoTestJSON(r io.Reader) (Result, error) {
	var stray bytes.Buffer
	exec, err := testjson.ScanTestOutput(testjson.ScanConfig{
		Stdout:                   r,
		Handler:                  &strayLines{w: &stray},
		IgnoreNonJSONOutputLines: true,
	})
	if err != nil {
		return Result{}, fmt.Errorf("parse go test -json: %w", err)
	}
	res := Result{Format: "go-test-json"}
	pkgs := exec.Packages()
	if len(pkgs) == 0 {
		return Result{}, fmt.Errorf("parse go test -json: no test events (is this `go test -json` output?)")
	}
	for _, name := range pkgs {
		pkg := exec.Package(name)
		for _, tc := range pkg.Passed {
			if tc.Test != "" {
				res.Passed = append(res.Passed, name+"."+string(tc.Test))
				res.Total++
			}
		}
		for _, tc := range pkg.Skipped {
			if tc.Test != "" {
				res.Total++
			}
		}
		failedNames := map[string]bool{}
		for _, tc := range pkg.Failed {
			if tc.Test == "" {
				continue // the package's own entry
			}
			failedNames[string(tc.Test)] = true
		}
		for _, tc := range pkg.Failed {
			if tc.Test == "" {
				continue
			}
			res.Total++
			// A parent fails whenever a subtest does: report the subtest.
			if hasFailedChild(string(tc.Test), failedNames) {
				continue
			}
			f := task.Failure{
				Package: name,
				Test:    string(tc.Test),
				Output:  strings.Join(pkg.OutputLines(tc), ""),
			}
			describe(&f)
			res.Failures = append(res.Failures, f)
		}
		if pkg.Result() == testjson.ActionFail && len(pkg.Failed) == 0 || pkg.TestMainFailed() && len(failedNames) == 0 {
			f := task.Failure{Package: name, Test: "", Output: strings.Join(pkg.OutputLines(testjson.TestCase{}), "")}
			if f.Output == "" {
				f.Output = stray.String()
			}
			describe(&f)
			res.BuildErrors = append(res.BuildErrors, f)
		}
	}
	return res, nil
}

func hasFailedChild(name string, failed map[string]bool) bool {
	for other := range failed {
		if strings.HasPrefix(other, name+"/") {
			return true
		}
	}
	return false
}

type strayLines struct{ w *bytes.Buffer }

func (s *strayLines) Event(testjson.TestEvent, *testjson.Execution) error { return nil }
func (s *strayLines) Err(text string) error {
	s.w.WriteString(text)
	s.w.WriteString("\n")
	return nil
}
