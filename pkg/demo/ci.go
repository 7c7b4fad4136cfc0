package demo

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Tests sets up a checkout and runs all the tests of its packages: the part
// of a language driver (lang.Driver) the samples' CI uses.
type Tests interface {
	Name() string
	Setup(ctx context.Context, dir string) error
	RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
}

// goCI is the Go sample's CI: `go test -json` of every package, whose
// stream is the report Go's CI posts.
func goCI(ctx context.Context, dir string, _ Tests) ([]byte, error) {
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: []string{"go", "test", "-json", "-count=1", "./..."}, Timeout: 5 * time.Minute})
	if err != nil {
		return nil, err
	}
	return []byte(res.Output), nil
}

// driverCI sets up the checkout and runs every test of it through its
// language driver, and writes what the driver read of the run (the
// runner's JUnit report: pytest's, vitest's, jest's) as a JUnit report
// whose tests are named by the driver's canonical ids.
func driverCI(ctx context.Context, dir string, tests Tests) ([]byte, error) {
	if tests == nil {
		return nil, errors.New("this sample's CI runs its tests through a language driver, and none was given")
	}
	if err := tests.Setup(ctx, dir); err != nil {
		return nil, fmt.Errorf("%s setup: %w", tests.Name(), err)
	}
	o, err := tests.RunPackages(ctx, dir, []string{"."})
	if err != nil {
		return nil, fmt.Errorf("%s tests: %w", tests.Name(), err)
	}
	if len(o.Passed)+len(o.Failed)+len(o.Build) == 0 {
		return nil, fmt.Errorf("%s tests: none ran:\n%s", tests.Name(), o.Output)
	}
	return JUnit(tests.Name(), o)
}

// junitSuites and the types below are the JUnit XML JUnit writes.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// buildFailed is the test case name report.ParseJUnit reads as a package
// that did not build (a Python file that did not collect).
const buildFailed = "[build failed]"

// JUnit writes a run's outcome as a JUnit report that report.Parse reads
// back with the outcome's test ids: a test named by a file ("tests/t.py::
// test_x[p]") is a case of classname "tests/t.py" named "test_x[p]"; an
// import path's ("example.com/m/p.TestX/sub") is a case of classname
// "example.com/m/p" named "TestX/sub". A package that did not build is an
// error case named "[build failed]". suite names the one suite.
func JUnit(suite string, o testrun.Outcome) ([]byte, error) {
	s := junitSuite{Name: suite, Time: fmt.Sprintf("%.3f", o.Duration.Seconds())}
	done := map[string]bool{}
	for _, id := range o.Passed {
		done[id] = true
		s.Cases = append(s.Cases, caseOf(id))
	}
	for _, f := range o.Failed {
		done[f.ID()] = true
		c := junitCase{Classname: f.Package, Name: f.Test}
		p := &junitProblem{Message: f.Message, Text: f.Output}
		if f.Kind == "error" {
			c.Error = p
			s.Errors++
		} else {
			c.Failure = p
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	var skipped []string
	for id, r := range o.Runs {
		if !done[id] && r.Skip > 0 && r.Pass == 0 && r.Fail == 0 {
			skipped = append(skipped, id)
		}
	}
	sort.Strings(skipped)
	for _, id := range skipped {
		c := caseOf(id)
		c.Skipped = &junitProblem{}
		s.Cases = append(s.Cases, c)
		s.Skipped++
	}
	for _, b := range o.Build {
		s.Cases = append(s.Cases, junitCase{Classname: b.Package, Name: buildFailed, Error: &junitProblem{Message: b.Message, Text: b.Output}})
		s.Errors++
	}
	s.Tests = len(s.Cases)
	out, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write junit report: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.Write(out)
	b.WriteString("\n")
	return b.Bytes(), nil
}

// caseOf is the test case of a canonical test id.
func caseOf(id string) junitCase {
	if file, test, ok := strings.Cut(id, "::"); ok && task.IsTestFilePath(file) {
		return junitCase{Classname: file, Name: test}
	}
	pkg, test := splitGoID(id)
	return junitCase{Classname: pkg, Name: test}
}

// splitGoID splits "import/path.TestX/sub" at the first ".Test".
func splitGoID(id string) (pkg, test string) {
	if i := strings.Index(id, ".Test"); i >= 0 {
		return id[:i], id[i+1:]
	}
	return "", id
}
