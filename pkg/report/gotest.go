package report

import (
	"bytes"
	"encoding/json"
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
	data, err := io.ReadAll(r)
	if err != nil {
		return Result{}, fmt.Errorf("parse go test -json: read: %w", err)
	}
	var stray bytes.Buffer
	lines := &strayLines{w: &stray, failedBuild: failedBuilds(data)}
	exec, err := testjson.ScanTestOutput(testjson.ScanConfig{
		Stdout:                   bytes.NewReader(data),
		Handler:                  lines,
		IgnoreNonJSONOutputLines: true,
	})
	if err != nil {
		return Result{}, fmt.Errorf("parse go test -json: %w", err)
	}
	res := Result{Format: "go-test-json"}
	var pkgs []string
	for _, name := range exec.Packages() {
		// JSON lines that are not test events land in a package named "".
		if name != "" {
			pkgs = append(pkgs, name)
		}
	}
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
			f.Output = lines.buildOutput(name) + f.Output
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

type strayLines struct {
	w *bytes.Buffer
	// build holds the compiler's output by package: since Go 1.24 it comes
	// as "build-output" events naming an ImportPath, not a Package.
	build map[string]*strings.Builder
	// failedBuild names, by package, the package that did not compile.
	failedBuild map[string]string
}

func (s *strayLines) Event(e testjson.TestEvent, _ *testjson.Execution) error {
	if e.Action != testjson.ActionBuild || e.ImportPath == "" {
		return nil
	}
	// "example.com/m/b [example.com/m/b.test]" is package example.com/m/b,
	// and so is its external test package "example.com/m/b_test [...]".
	pkg, _, _ := strings.Cut(e.ImportPath, " ")
	pkg = strings.TrimSuffix(pkg, "_test")
	if s.build == nil {
		s.build = map[string]*strings.Builder{}
	}
	b, ok := s.build[pkg]
	if !ok {
		b = &strings.Builder{}
		s.build[pkg] = b
	}
	b.WriteString(e.Output)
	return nil
}

// buildOutput is the compiler's output for pkg: under the name of the
// package whose build failed (pkg itself or one of its dependencies).
func (s *strayLines) buildOutput(pkg string) string {
	name := pkg
	if fb, ok := s.failedBuild[pkg]; ok {
		name = fb
	}
	if b, ok := s.build[name]; ok {
		return b.String()
	}
	return ""
}

// failedBuilds maps each package whose tests did not build to the package
// that did not compile, from the FailedBuild field of its "fail" event
// (Go 1.24 and later), which testjson does not keep.
func failedBuilds(data []byte) map[string]string {
	m := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"FailedBuild"`)) {
			continue
		}
		var e struct{ Package, FailedBuild string }
		if json.Unmarshal(line, &e) != nil || e.Package == "" || e.FailedBuild == "" {
			continue
		}
		fb, _, _ := strings.Cut(e.FailedBuild, " ")
		m[e.Package] = strings.TrimSuffix(fb, "_test")
	}
	return m
}

func (s *strayLines) Err(text string) error {
	s.w.WriteString(text)
	s.w.WriteString("\n")
	return nil
}
