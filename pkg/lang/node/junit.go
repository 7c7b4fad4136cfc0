package node

import (
	"path"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/task"
)

// The JavaScript runners' JUnit dialects, as their reporters write them by
// default and with the settings projects commonly use. A test is named
// canonically as FILE::NAME where the report carries its file: Package the
// test file relative to the runner's root, Test its describe blocks and
// title joined by " > ". Where the report does not carry the file, Test is
// the test's full name as the reporter joined it and Package what the
// report has instead (jest-junit's suite name, or nothing): the Node
// driver's Resolve finds the file.
//
//   - vitest: classname the file, name "describe > title". A file that does
//     not load is a test case named by the file in both: a build failure of
//     the file.
//   - jest-junit, default templates: classname and name both "describe
//     title" (joined by spaces, a leading space when there is no describe
//     block), the suite named by the first describe block ("undefined"
//     when there is none): no file, the suite's name the package, the full
//     name the test (as for any report whose classname is its name). With
//     addFileAttribute the test case's file attribute is the file; with
//     classNameTemplate "{classname}" and titleTemplate "{title}" the
//     classname is the describe blocks (joined by " › " where the
//     ancestorSeparator is jest's own) and the name the title; without the
//     file, a test in nested describe blocks (" › " in its classname) is
//     named by its full name alone, the others by classname and title as
//     any report's are. A suite that
//     failed to run (reportTestSuiteErrors) is a test case whose classname
//     is "Test suite failed to run", named by the file, twice (an <error>
//     and a <failure>): one build failure of the file.
//   - mocha-junit-reporter: a suite per describe block carrying the file's
//     absolute path, name the full title (joined by spaces), classname the
//     title alone. The describe blocks are told apart by the suites of the
//     file seen so far (mochaNames).
//   - node:test (--test-reporter=junit): a suite per describe block (it has
//     a disabled attribute), classname "test", name the title; top-level
//     tests straight in <testsuites>; a file that fails to run a top-level
//     test case named by the file's absolute path. No file otherwise.
//
// Absolute paths are made relative where the report shows the root they
// are in (pkg/report does so for the files IsFile claims).

// jestSuiteError is the classname jest-junit gives a suite that failed to
// run.
const jestSuiteError = "Test suite failed to run"

// isJSFile reports a path with a JavaScript or TypeScript extension.
func isJSFile(p string) bool {
	return p != "" && !strings.ContainsAny(p, " \t\n") && isSourceExt(path.Ext(p))
}

// JUnitDialect is the runners' JUnit dialects (above) as pkg/report reads
// them (report.JUnitDialect), registered when the package loads.
type JUnitDialect struct{}

func init() { report.RegisterJUnitDialect(JUnitDialect{}) }

// JUnitReader starts the reading of one report.
func (JUnitDialect) JUnitReader() report.JUnitReader { return &junitReader{} }

// IsFile reports a JavaScript or TypeScript file.
func (JUnitDialect) IsFile(p string) bool { return isJSFile(p) }

// junitReader reads one report: mocha's suites' titles by file, in order,
// and which suites' titles are among them.
type junitReader struct {
	mocha     map[string][]string
	mochaSeen map[*report.JUnitSuite]bool
}

// NameCase names the test case in a JavaScript runner's dialect (above): its
// package, name and whether it stands for a file that did not load. False
// when the case is in none of them.
func (r *junitReader) NameCase(c *report.JUnitCase, suites []*report.JUnitSuite) bool {
	s := suites[len(suites)-1]
	failing := c.Failing
	file := c.File
	if file == "" {
		file = c.Name
	}
	switch {
	case c.Classname == jestSuiteError && isJSFile(file):
		c.Package, c.Build = file, true
	case c.Classname == "test" && (s.Loose || s.HasDisabled):
		if s.Loose && failing && isJSFile(c.Name) {
			c.Package, c.Build = c.Name, true
			break
		}
		var names []string
		for _, o := range suites {
			if o.HasDisabled {
				names = append(names, o.Name)
			}
		}
		c.Name = strings.Join(append(names, c.Name), " > ")
	case c.Classname == c.Name && failing && isJSFile(c.Name):
		c.Package, c.Build = c.Name, true
	case c.Classname == c.Name && c.Name != "":
		c.Name = strings.TrimSpace(c.Name)
		switch {
		case isJSFile(c.File):
			c.Package = c.File
		case isJSFile(s.File):
			c.Package = s.File
		default:
			// No file: any runner's report could be so; a JavaScript
			// stack in the failure makes it JavaScript's (isJSTrace).
			c.Package = s.Name
			return true
		}
	case isJSFile(c.Classname):
		c.Package = c.Classname
	case isJSFile(s.File) && c.File == "":
		c.Package = s.File
		if names := mochaNames(c.Name, c.Classname, r.mochaSuites(s)); names != nil {
			c.Name = strings.Join(names, " > ")
		}
	case isJSFile(c.File) || isJSFile(s.Name):
		c.Package = c.File
		if c.Package == "" {
			c.Package = s.Name
		}
		if cls := strings.TrimSpace(c.Classname); cls != "" && cls != c.Package {
			c.Name = strings.ReplaceAll(cls, " › ", " > ") + " > " + c.Name
		}
	case strings.Contains(c.Classname, " › "):
		c.Name = strings.ReplaceAll(strings.TrimSpace(c.Classname), " › ", " > ") + " > " + c.Name
	default:
		return false
	}
	c.Claimed = true
	return true
}

// DescribeFailure describes the failure of a case named by the dialect, or
// of any case whose failure holds a JavaScript stack trace (describeJS).
func (r *junitReader) DescribeFailure(f *task.Failure, c *report.JUnitCase, build bool) bool {
	if !c.Claimed && !isJSTrace(c.Body) {
		return false
	}
	describeJS(f, c.Message, c.Body, build)
	return true
}

var (
	// jsStackRE is a line of a JavaScript stack trace: V8's "at fn
	// (path:1:2)" and "at path:1:2", vitest's "❯ fn path:1:2".
	jsStackRE = regexp.MustCompile(`^\s*(?:at\s+(?:[^(]*\()?|❯\s+(?:\S+\s+)?)(?:file://)?([^\s()]+):(\d+):\d+\)?\s*$`)
	// codeFrameRE is a line of a code frame ("> 2 |   expect(1)").
	codeFrameRE = regexp.MustCompile(`^\s*>?\s*\d*\s+\|`)
)

// isJSTrace reports output holding a JavaScript stack trace.
func isJSTrace(output string) bool {
	for _, l := range strings.Split(output, "\n") {
		if m := jsStackRE.FindStringSubmatch(l); m != nil && isJSFile(m[1]) {
			return true
		}
	}
	return false
}

// describeJS fills a JavaScript failure's message and frames: the message
// attribute when it says something (vitest's, mocha's, node:test's), else
// the error's text before its stack trace (jest-junit writes no message);
// the frames from the stack trace, the runners' and node's own left out.
// Colour codes are taken out of both and of the output. A file that did
// not load with no more than that said has no message.
func describeJS(f *task.Failure, attrMsg, body string, build bool) {
	f.Output = report.StripANSI(f.Output)
	body = report.StripANSI(body)
	attrMsg = strings.TrimSpace(report.StripANSI(attrMsg))
	switch {
	case report.Informative(attrMsg):
		f.Message = report.CapMessage(attrMsg)
	default:
		switch m := jsErrorText(body); {
		case m != "":
			f.Message = report.CapMessage(m)
		case build:
			// node:test's "test failed" of a file that did not run: the
			// reproduction's build says what failed.
			f.Message = ""
		case attrMsg != "":
			f.Message = attrMsg
		}
	}
	f.Frames = jsFrames(f.Output, report.MaxTraceFrames)
	if len(f.Frames) == 0 {
		// The locations the output names otherwise (a code frame's), the
		// stack's lines left out: they named dependencies only.
		var rest []string
		for _, l := range strings.Split(f.Output, "\n") {
			if !jsStackRE.MatchString(l) {
				rest = append(rest, l)
			}
		}
		f.Frames = report.TraceFrames(strings.ReplaceAll(strings.Join(rest, "\n"), "file://", ""))
	}
}

// jsErrorText is the text of the error a JavaScript failure's body starts
// with: its lines before the stack trace (or a code frame, or vitest's
// separator), blank ones and jest's "●" headings left out, and a bare
// "Error: " before it. A jest matcher's error is its first line and its
// Expected and Received lines, joined with "; " (as the Node driver says
// it). node:test's "[Error: test failed]" says nothing: "".
func jsErrorText(body string) string {
	var lines []string
	indent := -1
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "●"):
			continue
		case strings.HasPrefix(t, "[Error: test failed]"):
			return ""
		case jsStackRE.MatchString(l) || strings.HasPrefix(t, "at ") || codeFrameRE.MatchString(l) ||
			strings.HasPrefix(t, "⎯") || strings.HasPrefix(t, "Serialized Error:"):
		default:
			l = strings.TrimRight(l, " \t")
			if n := len(l) - len(strings.TrimLeft(l, " \t")); indent < 0 || n < indent {
				indent = n
			}
			lines = append(lines, l)
			continue
		}
		if len(lines) > 0 {
			break
		}
	}
	if len(lines) == 0 {
		return ""
	}
	for i, l := range lines {
		lines[i] = l[indent:]
	}
	lines[0] = strings.TrimPrefix(lines[0], "Error: ")
	if strings.HasPrefix(lines[0], "expect(") {
		parts := lines[:1]
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "Expected") || strings.HasPrefix(l, "Received") {
				parts = append(parts, strings.Join(strings.Fields(l), " "))
			}
		}
		return strings.Join(parts, "; ")
	}
	return strings.Join(lines, "\n")
}

// jsFrames are the distinct source locations of the JavaScript stack
// traces in output, innermost first: "src/price.ts:7" from "at fn
// (src/price.ts:7:11)"; node's own (node:internal/…), dependencies'
// (node_modules) and anonymous ones are left out.
func jsFrames(output string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(output, "\n") {
		m := jsStackRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		file := m[1]
		if strings.HasPrefix(file, "node:") || strings.Contains(file, "node_modules/") || strings.HasPrefix(file, "internal/") ||
			strings.HasPrefix(file, "<") || !strings.Contains(file, ".") {
			continue
		}
		fr := file + ":" + m[2]
		if seen[fr] {
			continue
		}
		seen[fr] = true
		out = append(out, fr)
		if len(out) == n {
			break
		}
	}
	return out
}

// maxMochaTitles bounds the suite titles kept per file for mochaNames, and
// maxMochaSteps the attempts of one split.
const (
	maxMochaTitles = 256
	maxMochaSteps  = 1024
)

// mochaSuites are the titles of the suites of s's file seen so far (the
// last one s's), which mochaNames splits a full title with.
func (r *junitReader) mochaSuites(s *report.JUnitSuite) []string {
	if r.mocha == nil {
		r.mocha, r.mochaSeen = map[string][]string{}, map[*report.JUnitSuite]bool{}
	}
	titles := r.mocha[s.File]
	if r.mochaSeen[s] {
		return titles
	}
	r.mochaSeen[s] = true
	if len(titles) < maxMochaTitles {
		titles = append(titles, s.Name)
		r.mocha[s.File] = titles
	}
	return titles
}

// mochaNames splits mocha's full title (the describe blocks' titles and the
// test's, joined by spaces) into those titles: the test's own title ends
// it, the innermost describe block's (the last of suites) is before it,
// and the outer ones are suites of the file seen before. Nil when it does
// not split so.
func mochaNames(full, title string, suites []string) []string {
	if title == "" || len(suites) == 0 || !strings.HasSuffix(full, " "+title) {
		return nil
	}
	rest := strings.TrimSuffix(full, " "+title)
	steps := 0
	var split func(rest string, last int) []string
	split = func(rest string, last int) []string {
		if steps++; steps > maxMochaSteps {
			return nil
		}
		t := suites[last]
		switch {
		case rest == t:
			return []string{t}
		case !strings.HasSuffix(rest, " "+t):
			return nil
		}
		outer := strings.TrimSuffix(rest, " "+t)
		for i := last - 1; i >= 0; i-- {
			if names := split(outer, i); names != nil {
				return append(names, t)
			}
		}
		return nil
	}
	names := split(rest, len(suites)-1)
	if names == nil {
		return nil
	}
	return append(names, title)
}
