package report

import (
	"regexp"
	"slices"
	"strings"

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
//     ancestorSeparator is jest's own) and the name the title. A suite that
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
// are in (relativeToReport).

// jestSuiteError is the classname jest-junit gives a suite that failed to
// run.
const jestSuiteError = "Test suite failed to run"

// jsExts are the extensions of JavaScript and TypeScript files.
var jsExts = []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}

// isJSFile reports a path with a JavaScript or TypeScript extension.
func isJSFile(p string) bool {
	return p != "" && !strings.ContainsAny(p, " \t\n") && slices.ContainsFunc(jsExts, func(ext string) bool { return strings.HasSuffix(p, ext) })
}

// jsName names the test case in a JavaScript runner's dialect (above): its
// package, name and whether it stands for a file that did not load. False
// when the case is in none of them.
func (p *junitParser) jsName(tc *junitCase) bool {
	s := p.suites[len(p.suites)-1]
	failing := tc.status == statusFailed || tc.status == statusError
	file := tc.file
	if file == "" {
		file = tc.name
	}
	switch {
	case tc.classname == jestSuiteError && isJSFile(file):
		tc.pkg, tc.build = file, true
	case tc.classname == "test" && (s.loose || s.nodeTest):
		if s.loose && failing && isJSFile(tc.name) {
			tc.pkg, tc.build = tc.name, true
			break
		}
		var names []string
		for _, o := range p.suites {
			if o.nodeTest {
				names = append(names, o.name)
			}
		}
		tc.name = strings.Join(append(names, tc.name), " > ")
	case tc.classname == tc.name && failing && isJSFile(tc.name):
		tc.pkg, tc.build = tc.name, true
	case tc.classname == tc.name && tc.name != "":
		tc.name = strings.TrimSpace(tc.name)
		switch {
		case isJSFile(tc.file):
			tc.pkg = tc.file
		case isJSFile(s.file):
			tc.pkg = s.file
		default:
			tc.pkg = s.name
		}
	case isJSFile(tc.classname):
		tc.pkg = tc.classname
	case isJSFile(s.file) && tc.file == "":
		tc.pkg = s.file
		if names := mochaNames(tc.name, tc.classname, p.mochaSuites(s)); names != nil {
			tc.name = strings.Join(names, " > ")
		}
	case isJSFile(tc.file) || isJSFile(s.name):
		tc.pkg = tc.file
		if tc.pkg == "" {
			tc.pkg = s.name
		}
		if c := strings.TrimSpace(tc.classname); c != "" && c != tc.pkg {
			tc.name = strings.ReplaceAll(c, " › ", " > ") + " > " + tc.name
		}
	default:
		return false
	}
	tc.js = true
	return true
}

var (
	// jsStackRE is a line of a JavaScript stack trace: V8's "at fn
	// (path:1:2)" and "at path:1:2", vitest's "❯ fn path:1:2".
	jsStackRE = regexp.MustCompile(`^\s*(?:at\s+(?:[^(]*\()?|❯\s+(?:\S+\s+)?)(?:file://)?([^\s()]+):(\d+):\d+\)?\s*$`)
	// codeFrameRE is a line of a code frame ("> 2 |   expect(1)").
	codeFrameRE = regexp.MustCompile(`^\s*>?\s*\d*\s+\|`)
	// ansiRE is a terminal's colour code, its escape character there or
	// lost (vitest writes "[31m" into its JUnit's attributes).
	// absPathRE is an absolute path in a message.
	absPathRE = regexp.MustCompile(`(?:^|[\s'"(])(?:file://)?(/[^\s'"()\[\]:,]+)`)
	ansiRE    = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\[(?:\d{1,3};)*\d{1,3}m`)
)

// StripANSI removes terminal colour codes from s.
func StripANSI(s string) string {
	if !strings.Contains(s, "m") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

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
// Colour codes are taken out of both and of the output.
func describeJS(f *task.Failure, attrMsg, body string) {
	f.Output = StripANSI(f.Output)
	body = StripANSI(body)
	attrMsg = strings.TrimSpace(StripANSI(attrMsg))
	switch {
	case informative(attrMsg):
		f.Message = capMessage(attrMsg)
	default:
		if m := jsErrorText(body); m != "" {
			f.Message = capMessage(m)
		} else if attrMsg != "" {
			f.Message = attrMsg
		}
	}
	f.Frames = jsFrames(f.Output, maxTraceFrames)
	if len(f.Frames) == 0 {
		// The locations the output names otherwise (a code frame's), the
		// stack's lines left out: they named dependencies only.
		var rest []string
		for _, l := range strings.Split(f.Output, "\n") {
			if !jsStackRE.MatchString(l) {
				rest = append(rest, l)
			}
		}
		f.Frames = traceFrames(strings.ReplaceAll(strings.Join(rest, "\n"), "file://", ""))
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

// relativeToReport makes the absolute paths of res relative to the roots
// the report itself shows: a path that is absolute in one place and
// relative in another (jest's absolute stack frames of a file its file
// attribute names relative; mocha's absolute suite file whose frames are
// relative; vitest's messages naming the absolute path of a file it names
// relative) gives the root the relative paths are from. Packages, frames,
// messages, outputs and the test IDs lose the roots; a report that shows
// none is left as it is (triage learns the root from its reproduction).
func relativeToReport(res *Result) {
	rel, abs := map[string]bool{}, map[string]bool{}
	add := func(p string) {
		switch {
		case strings.HasPrefix(p, "/"):
			abs[p] = true
		case p != "" && !strings.HasPrefix(p, "."):
			rel[p] = true
		}
	}
	all := [][]task.Failure{res.Failures, res.BuildErrors}
	for _, fs := range all {
		for _, f := range fs {
			for _, m := range absPathRE.FindAllStringSubmatch(f.Message, maxTraceFrames) {
				if isJSFile(m[1]) {
					add(m[1])
				}
			}
			if task.IsTestFilePath(f.Package) {
				add(f.Package)
			}
			for _, fr := range f.Frames {
				file, _ := cutLine(fr)
				add(file)
			}
		}
	}
	if len(rel) == 0 || len(abs) == 0 {
		return
	}
	rootSet := map[string]bool{}
	for a := range abs {
		for i := 1; i < len(a); i++ {
			if a[i] == '/' && rel[a[i+1:]] {
				rootSet[a[:i+1]] = true
				break
			}
		}
	}
	if len(rootSet) == 0 {
		return
	}
	roots := make([]string, 0, len(rootSet))
	for r := range rootSet {
		roots = append(roots, r)
	}
	// The longest first: a root within another is stripped before it.
	slices.SortFunc(roots, func(a, b string) int { return len(b) - len(a) })
	strip := func(s string) string {
		for _, r := range roots {
			s = strings.ReplaceAll(s, "file://"+r, "")
			s = strings.ReplaceAll(s, r, "")
		}
		return s
	}
	trim := func(s string) string {
		for _, r := range roots {
			if t, ok := strings.CutPrefix(s, r); ok {
				return t
			}
		}
		return s
	}
	for _, fs := range all {
		for i := range fs {
			f := &fs[i]
			f.Package = trim(f.Package)
			f.Message, f.Output = strip(f.Message), strip(f.Output)
			for j, fr := range f.Frames {
				f.Frames[j] = trim(fr)
			}
		}
	}
	for _, ids := range [][]string{res.Passed, res.Skipped} {
		for i, id := range ids {
			ids[i] = trim(id)
		}
	}
}

// cutLine splits a frame "file:line" into its file and line.
func cutLine(fr string) (file, line string) {
	i := strings.LastIndexByte(fr, ':')
	if i < 0 {
		return fr, ""
	}
	return fr[:i], fr[i+1:]
}

// maxMochaTitles bounds the suite titles kept per file for mochaNames, and
// maxMochaSteps the attempts of one split.
const (
	maxMochaTitles = 256
	maxMochaSteps  = 1024
)

// mochaSuites are the titles of the suites of s's file seen so far (the
// last one s's), which mochaNames splits a full title with.
func (p *junitParser) mochaSuites(s *junitSuite) []string {
	if p.mocha == nil {
		p.mocha = map[string][]string{}
	}
	titles := p.mocha[s.file]
	if s.mochaSeen {
		return titles
	}
	s.mochaSeen = true
	if len(titles) < maxMochaTitles {
		titles = append(titles, s.name)
		p.mocha[s.file] = titles
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
