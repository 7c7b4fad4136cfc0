package golang

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"gotest.tools/gotestsum/testjson"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// ParseGoTestJSON parses the output of `go test -json` as a stream: the
// events are read one by one and only what the result reports is kept (the
// output of failing tests, capped; counts for the rest), so a run that prints
// megabytes is read whole and never from a cut. Lines that are not JSON (a
// build error printed before the events) are kept as build output; a stream
// with no test event at all is rejected.
//
// Each test's own outcome decides: a test fails when go test says it failed.
// A parent whose failure is only its subtests' is left to them; a test that
// started but never ended (paused when a panic killed the binary, or cut off
// when the stream ended) did not run, unless it is the test that panicked or
// timed out. A package with no final result is Incomplete.
func ParseGoTestJSON(r io.Reader) (report.Result, error) { return ParseGoTestStream(r, nil) }

// ParseGoTestStream is ParseGoTestJSON that also writes the text of the
// run (every output event, and the lines that are not JSON) to text, when
// text is not nil.
func ParseGoTestStream(r io.Reader, text io.Writer) (report.Result, error) {
	c := &collector{pkgs: map[string]*pkgState{}, text: text}
	_, err := testjson.ScanTestOutput(testjson.ScanConfig{
		Stdout:                   r,
		Handler:                  c,
		IgnoreNonJSONOutputLines: true,
	})
	if err != nil {
		return report.Result{}, fmt.Errorf("parse go test -json: %w", err)
	}
	if len(c.order) == 0 {
		return report.Result{}, errNoEvents
	}
	return c.result(), nil
}

type testState struct {
	name    string
	running bool // started and not ended
	out     report.Text
	runs    report.Runs
	// failure is the output of the first failed run.
	failure    string
	hasFailure bool
}

type pkgState struct {
	name   string
	tests  map[string]*testState
	order  []string
	out    report.Text // the package's own output
	result testjson.Action
	// failedBuild names the package that did not compile when this
	// package's tests did not build (Go 1.24's FailedBuild).
	failedBuild string
}

type collector struct {
	pkgs  map[string]*pkgState
	order []string
	// build holds the compiler's output by package: since Go 1.24 it comes
	// as "build-output" events naming an ImportPath, not a Package.
	build map[string]*report.Text
	stray report.Text
	text  io.Writer
}

func (c *collector) pkg(name string) *pkgState {
	p, ok := c.pkgs[name]
	if !ok {
		p = &pkgState{name: name, tests: map[string]*testState{}}
		c.pkgs[name] = p
		c.order = append(c.order, name)
	}
	return p
}

func (p *pkgState) test(name string) *testState {
	t, ok := p.tests[name]
	if !ok {
		t = &testState{name: name}
		p.tests[name] = t
		p.order = append(p.order, name)
	}
	return t
}

// Event is called by the scanner for each event, in order.
func (c *collector) Event(e testjson.TestEvent, _ *testjson.Execution) error {
	if e.Action == testjson.ActionBuild {
		c.buildOutput(e)
	}
	if c.text != nil && e.Output != "" {
		_, _ = io.WriteString(c.text, e.Output)
	}
	if e.Action == testjson.ActionBuild {
		return nil
	}
	if e.Package == "" {
		return nil
	}
	if e.Elapsed < 0 {
		// The scanner's own "fail" for tests that never ended: the
		// stream says nothing of them, and neither do we.
		return nil
	}
	p := c.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case testjson.ActionOutput:
			p.out.WriteString(e.Output)
		case testjson.ActionPass, testjson.ActionFail, testjson.ActionSkip:
			p.result = e.Action
			if e.Action == testjson.ActionFail {
				p.failedBuild = failedBuild(e.Bytes())
			}
		}
		return nil
	}
	t := p.test(e.Test)
	switch e.Action {
	case testjson.ActionRun:
		t.running = true
		t.out = report.Text{}
	case testjson.ActionOutput:
		t.running = t.running || t.runs == (report.Runs{})
		t.out.WriteString(e.Output)
	case testjson.ActionPass:
		t.runs.Pass++
		t.running = false
		t.out = report.Text{}
	case testjson.ActionSkip:
		t.runs.Skip++
		t.running = false
		t.out = report.Text{}
	case testjson.ActionFail:
		t.runs.Fail++
		t.running = false
		if !t.hasFailure {
			t.failure, t.hasFailure = t.out.String(), true
		}
		t.out = report.Text{}
	}
	return nil
}

func (c *collector) buildOutput(e testjson.TestEvent) {
	if e.ImportPath == "" {
		return
	}
	// "example.com/m/b [example.com/m/b.test]" is package example.com/m/b,
	// and so is its external test package "example.com/m/b_test [...]".
	pkg, _, _ := strings.Cut(e.ImportPath, " ")
	pkg = strings.TrimSuffix(pkg, "_test")
	if c.build == nil {
		c.build = map[string]*report.Text{}
	}
	b, ok := c.build[pkg]
	if !ok {
		b = &report.Text{}
		c.build[pkg] = b
	}
	b.WriteString(e.Output)
}

// failedBuild reads the FailedBuild field of a package's "fail" event (Go
// 1.24 and later), which the scanner does not keep.
func failedBuild(raw []byte) string {
	if !strings.Contains(string(raw), `"FailedBuild"`) {
		return ""
	}
	var e struct{ FailedBuild string }
	if json.Unmarshal(raw, &e) != nil || e.FailedBuild == "" {
		return ""
	}
	fb, _, _ := strings.Cut(e.FailedBuild, " ")
	return strings.TrimSuffix(fb, "_test")
}

// Err receives the lines that are not JSON.
func (c *collector) Err(text string) error {
	c.stray.WriteString(text + "\n")
	if c.text != nil {
		_, _ = io.WriteString(c.text, text+"\n")
	}
	return nil
}

func (c *collector) buildText(pkg string) string {
	if b, ok := c.build[pkg]; ok {
		return b.String()
	}
	return ""
}

func (c *collector) result() report.Result {
	res := report.Result{Format: formatName, Runs: map[string]report.Runs{}}
	for _, name := range c.order {
		p := c.pkgs[name]
		c.finishPackage(p, &res)
	}
	return res
}

func (c *collector) finishPackage(p *pkgState, res *report.Result) {
	p.settleUnfinished(res)
	p.movePanicsToSubtests()
	failedChild := p.failedParents()
	for _, name := range p.order {
		t := p.tests[name]
		id := p.name + "." + name
		if t.runs != (report.Runs{}) {
			res.Total++
			res.Runs[id] = t.runs
		}
		switch {
		case t.runs.Fail > 0:
			// A parent that failed only because its subtests did is
			// reported through them.
			if failedChild[name] && Message(t.failure) == "" {
				continue
			}
			f := task.Failure{Package: p.name, Test: name, Output: t.failure}
			describe(&f)
			if failedChild[name] {
				// What the parent printed itself (a log line, "skipped:
				// 18") is no assertion: the message and frames are its
				// first failing subtest's.
				for _, other := range p.order {
					o := p.tests[other]
					if strings.HasPrefix(other, name+"/") && o.runs.Fail > 0 && Message(o.failure) != "" {
						f.Message = Message(o.failure)
						if fr := Frames(o.failure, 5); len(fr) > 0 {
							f.Frames = fr
						}
						break
					}
				}
			}
			res.Failures = append(res.Failures, f)
		case t.runs.Pass > 0:
			res.Passed = append(res.Passed, id)
		case t.runs.Skip > 0:
			res.Skipped = append(res.Skipped, id)
		}
	}
	if p.result == "" {
		res.Incomplete = append(res.Incomplete, p.name)
	}
	c.packageFailure(p, res)
	sort.Strings(res.NotRun)
}

// settleUnfinished decides the tests that never ended: failed if it is
// the one that panicked or timed out (its output says so); the others did
// not run.
func (p *pkgState) settleUnfinished(res *report.Result) {
	for _, name := range p.order {
		t := p.tests[name]
		if !t.running {
			continue
		}
		out := t.out.String()
		if hasPanic(out) {
			t.runs.Fail++
			if !t.hasFailure {
				t.failure, t.hasFailure = out, true
			}
			continue
		}
		if t.runs == (report.Runs{}) {
			res.NotRun = append(res.NotRun, p.name+"."+name)
		}
	}
}

// movePanicsToSubtests: a panic in a subtest is printed under its parent,
// after the subtest's own "--- FAIL" line: it is the failure of the
// subtests that failed without a word.
func (p *pkgState) movePanicsToSubtests() {
	for _, name := range p.order {
		t := p.tests[name]
		if !t.hasFailure || !hasPanic(t.failure) {
			continue
		}
		moved := false
		for _, other := range p.order {
			o := p.tests[other]
			if strings.HasPrefix(other, name+"/") && o.hasFailure && Message(o.failure) == "" {
				o.failure += panicText(t.failure)
				moved = true
			}
		}
		if moved {
			t.failure = strings.Replace(t.failure, panicText(t.failure), "", 1)
		}
	}
}

// failedParents are the tests with a failing subtest, at any depth.
func (p *pkgState) failedParents() map[string]bool {
	failedChild := map[string]bool{}
	for _, name := range p.order {
		if t := p.tests[name]; t.runs.Fail > 0 {
			for parent := name; ; {
				i := strings.LastIndexByte(parent, '/')
				if i < 0 {
					break
				}
				parent = parent[:i]
				failedChild[parent] = true
			}
		}
	}
	return failedChild
}

// packageFailure records the package's own failure when it failed with no
// failing test: it did not build, or its TestMain, init or a goroutine
// outside any test failed.
func (c *collector) packageFailure(p *pkgState, res *report.Result) {
	noTestFailed := true
	for _, t := range p.tests {
		if t.runs.Fail > 0 {
			noTestFailed = false
			break
		}
	}
	if p.result == testjson.ActionFail && noTestFailed {
		build := p.failedBuild
		if build == "" {
			build = p.name
		}
		out := p.out.String()
		if strings.TrimSpace(stripFailLine(out)) == "" {
			out = c.stray.String()
		}
		f := task.Failure{Package: p.name, Output: c.buildText(build) + out}
		describeBuild(&f)
		res.BuildErrors = append(res.BuildErrors, f)
	}
}

// stripFailLine drops go test's "FAIL\tpkg\t0.1s" summary lines.
func stripFailLine(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "FAIL\t") || l == "FAIL" {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// hasPanic reports a test's output that holds a panic.
func hasPanic(out string) bool { return panicText(out) != "" }
