package node

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/joblog"
)

// mocha's spec reporter.
var (
	mochaFailingRE = regexp.MustCompile(`^\s+\d+ failing$`)
	// A failure's first line: "  1) price" (its titles follow, one a
	// line, the last ending with ":").
	mochaNumberRE = regexp.MustCompile(`^  (\d+)\) (.+)$`)
	// The frame of the test's own function: mocha runs it as a Context's.
	mochaTestFrameRE = regexp.MustCompile(`^\s+at Context\.<anonymous> \((.+?):\d+:\d+\)$`)
	mochaFrameRE     = regexp.MustCompile(`^\s+at (?:.+ \()?([^()\s]+?):\d+:\d+\)?$`)
)

// readMochaConsole reads mocha's spec reporter: after "N failing", each
// numbered failure's titles (describe blocks, then the test) and text;
// the test's file is its function's frame in the stack trace (the spec
// reporter names no file). It writes mocha-junit-reporter's report: a
// suite per describe block, carrying the file.
func readMochaConsole(lines []string) []byte {
	start := -1
	for i, l := range lines {
		if strings.HasSuffix(l, " failing") && mochaFailingRE.MatchString(l) {
			start = i + 1
		}
	}
	if start < 0 {
		return nil
	}
	var list []*consoleFailure
	for i := start; i < len(lines) && len(list) < joblog.MaxFailures; i++ {
		m := matchIf(strings.HasPrefix(lines[i], "  ") && strings.Contains(lines[i], ") "), mochaNumberRE, lines[i])
		if m == nil {
			if n := len(list); n > 0 {
				list[n-1].addLine(lines[i])
			}
			continue
		}
		titles := []string{strings.TrimSpace(m[2])}
		for !strings.HasSuffix(titles[len(titles)-1], ":") && i+1 < len(lines) && len(titles) < 64 {
			i++
			titles = append(titles, strings.TrimSpace(lines[i]))
		}
		titles[len(titles)-1] = strings.TrimSuffix(titles[len(titles)-1], ":")
		list = append(list, &consoleFailure{titles: titles})
	}
	var fs failures
	for _, f := range list {
		if kept := fs.add(mochaFile(f.lines), f.titles, false); kept != nil {
			kept.lines = f.lines
		}
	}
	return joblog.JUnit("Mocha Tests", mochaSuites(fs.list))
}

// mochaFile is the test's file in a failure's stack trace: its function's
// frame, else the first frame outside node and node_modules.
func mochaFile(lines []string) string {
	for _, l := range lines {
		if m := mochaTestFrameRE.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	for _, l := range lines {
		if m := mochaFrameRE.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], "node:") && !strings.Contains(m[1], "node_modules/") {
			return m[1]
		}
	}
	return ""
}

// mochaSuites are mocha-junit-reporter's suites of the failures: one per
// describe block, each block's ancestors before it (the report's reader
// splits a test's full title with the titles of the file's suites seen so
// far), the test's case in its innermost block.
func mochaSuites(list []*consoleFailure) []joblog.Suite {
	var suites []joblog.Suite
	at := map[string]int{} // file and describe path → index in suites
	for _, f := range list {
		n := len(f.titles)
		idx := -1
		if n < 2 { // a test outside any describe block: the root suite's, with no file (as the reporter writes it)
			i, ok := at["\x00root"]
			if !ok {
				suites = append(suites, joblog.Suite{Name: "Root Suite"})
				i = len(suites) - 1
				at["\x00root"] = i
			}
			idx = i
		}
		for d := 1; d < n; d++ {
			key := f.file + "\x00" + strings.Join(f.titles[:d], "\x00")
			i, ok := at[key]
			if !ok {
				suites = append(suites, joblog.Suite{Name: f.titles[d-1], File: f.file})
				i = len(suites) - 1
				at[key] = i
			}
			idx = i
		}
		typ, msg := firstError(f.lines)
		suites[idx].TestCases = append(suites[idx].TestCases, joblog.Case{
			ClassName: f.titles[n-1], Name: strings.Join(f.titles, " "),
			Failure: &joblog.Problem{Message: msg, Type: typ, Text: joblog.Output(f.lines)},
		})
	}
	return suites
}
