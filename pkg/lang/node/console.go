package node

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/joblog"
)

// ReadConsole reads the console output of the JavaScript runners in a CI
// job's log (lines as pkg/joblog cleans them): jest's default reporter,
// vitest's, mocha's spec reporter and node:test's. It writes the failures
// as the JUnit XML of the runner's usual JUnit reporter (jest-junit with
// its file attribute and suite errors, vitest's junit, mocha-junit-
// reporter), so that report.Parse gives the ids the JUnit path gives: a
// test file that failed to load is the same build failure. nil when the
// log holds none of their output; when it holds several runners', the
// first in that order.
func (Driver) ReadConsole(lines []string) []byte {
	for _, read := range []func([]string) []byte{readJestConsole, readVitestConsole, readMochaConsole, readNodeTestConsole} {
		if rep := read(lines); rep != nil {
			return rep
		}
	}
	return nil
}

// consoleFailure is one failure a runner printed: its file, its titles
// (describe blocks, then the test's), and the lines that say why.
type consoleFailure struct {
	file   string
	titles []string
	suite  bool // the file failed to load: no test ran
	lines  []string
}

// failures collects a log's failures, each once (jest repeats them in its
// summary of failing tests), bounded.
type failures struct {
	list []*consoleFailure
	seen map[string]bool
}

// add starts a failure; nil when it is one already seen, unsafe, or one
// too many.
func (fs *failures) add(file string, titles []string, suite bool) *consoleFailure {
	if !joblog.SafeName(file) || len(fs.list) >= joblog.MaxFailures {
		return nil
	}
	for _, t := range titles {
		if t == "" || len(t) > joblog.MaxName {
			return nil
		}
	}
	key := file + "\x00" + strings.Join(titles, "\x00")
	if fs.seen == nil {
		fs.seen = map[string]bool{}
	}
	if fs.seen[key] {
		return nil
	}
	fs.seen[key] = true
	f := &consoleFailure{file: file, titles: titles, suite: suite}
	fs.list = append(fs.list, f)
	return f
}

// addLine adds a line to f's text (nil f: a failure not kept), bounded.
func (f *consoleFailure) addLine(l string) {
	if f != nil && len(f.lines) <= joblog.MaxOutputLines {
		f.lines = append(f.lines, l)
	}
}

// byFile groups failures into one suite a file, in the order first seen.
func byFile(list []*consoleFailure, suite func(file string, fs []*consoleFailure) joblog.Suite) []joblog.Suite {
	var order []string
	groups := map[string][]*consoleFailure{}
	for _, f := range list {
		if _, ok := groups[f.file]; !ok {
			order = append(order, f.file)
		}
		groups[f.file] = append(groups[f.file], f)
	}
	var suites []joblog.Suite
	for _, file := range order {
		suites = append(suites, suite(file, groups[file]))
	}
	return suites
}

// errorHeadRE is an error's first line: "RangeError: discount…".
var errorHeadRE = regexp.MustCompile(`^\s*((?:[A-Z]\w*)?Error)(?: \[\w+\])?: (.*)$`)

// firstError is the type and message of the first error line of a
// failure's text ("", and the first line, when none is typed).
func firstError(lines []string) (typ, msg string) {
	for _, l := range lines {
		if m := errorHeadRE.FindStringSubmatch(l); m != nil {
			return m[1], m[2]
		}
	}
	for _, l := range lines {
		if s := strings.TrimSpace(l); s != "" {
			return "", s
		}
	}
	return "", ""
}

// jest's default reporter.
var (
	jestFileRE  = regexp.MustCompile(`^\s?(FAIL|PASS) +(\S+?)(?: \([\d.]+ m?s\))?$`)
	jestTitleRE = regexp.MustCompile(`^  ● (.+)$`)
)

// readJestConsole reads jest's default reporter: "FAIL file" and, under
// it, each failure's "● describe › test" heading and text; a file that
// failed to load is "● Test suite failed to run". It writes jest-junit's
// report with its file attribute and suite errors.
func readJestConsole(lines []string) []byte {
	seen := false
	for _, l := range lines {
		if strings.HasPrefix(l, "Test Suites: ") {
			seen = true
			break
		}
	}
	if !seen {
		return nil
	}
	var (
		fs   failures
		file string
		cur  *consoleFailure
	)
	for _, l := range lines {
		if m := matchIf(strings.Contains(l, "FAIL") || strings.Contains(l, "PASS"), jestFileRE, l); m != nil {
			file, cur = m[2], nil
			continue
		}
		if strings.HasPrefix(l, "Test Suites: ") || strings.HasPrefix(l, "Summary of all failing tests") {
			file, cur = "", nil
			continue
		}
		if m := matchIf(strings.HasPrefix(l, "  ● "), jestTitleRE, l); m != nil && file != "" {
			if m[1] == "Test suite failed to run" {
				cur = fs.add(file, nil, true)
			} else {
				cur = fs.add(file, strings.Split(m[1], " › "), false)
			}
			continue
		}
		cur.addLine(l)
	}
	return joblog.JUnit("jest tests", byFile(fs.list, jestSuite))
}

// jestSuite is jest-junit's suite of a file (suite name, classname and
// title as JEST_JUNIT_SUITE_NAME="{filepath}", JEST_JUNIT_CLASSNAME=
// "{classname}", JEST_JUNIT_TITLE="{title}" with " › " between ancestors
// write them).
func jestSuite(file string, list []*consoleFailure) joblog.Suite {
	s := joblog.Suite{Name: file}
	for _, f := range list {
		text := joblog.Output(f.lines)
		if f.suite {
			s.TestCases = append(s.TestCases, joblog.Case{ClassName: "Test suite failed to run", Name: file, File: file, Error: &joblog.Problem{Text: text}})
			continue
		}
		n := len(f.titles)
		s.TestCases = append(s.TestCases, joblog.Case{
			ClassName: strings.Join(f.titles[:max(n-1, 0)], " › "), Name: f.titles[n-1], File: file,
			Failure: &joblog.Problem{Text: text},
		})
	}
	return s
}

// vitest's default reporter.
var (
	vitestFailRE    = regexp.MustCompile(`^ ?FAIL +(?:\|[^|]+\| )?(\S+?)(?: > (.+)| \[ \S+ \])$`)
	vitestSummaryRE = regexp.MustCompile(`^\s*Test Files\s+\d+ (?:failed|passed)`)
	vitestRuleRE    = regexp.MustCompile(`^\s*⎯{3,}`)
)

// readVitestConsole reads vitest's default reporter: under "Failed Suites"
// and "Failed Tests", each "FAIL file > describe > test" (a suite that
// failed to load: "FAIL file [ file ]") and its text up to the next rule.
// It writes vitest's junit reporter's report.
func readVitestConsole(lines []string) []byte {
	seen := false
	for _, l := range lines {
		if strings.Contains(l, "Test Files") && vitestSummaryRE.MatchString(l) {
			seen = true
			break
		}
	}
	if !seen {
		return nil
	}
	var (
		fs  failures
		cur *consoleFailure
	)
	for _, l := range lines {
		if m := matchIf(strings.Contains(l, "FAIL"), vitestFailRE, l); m != nil {
			if m[2] == "" {
				cur = fs.add(m[1], nil, true)
			} else {
				cur = fs.add(m[1], strings.Split(m[2], " > "), false)
			}
			continue
		}
		if strings.Contains(l, "⎯") && vitestRuleRE.MatchString(l) || strings.Contains(l, "Test Files") && vitestSummaryRE.MatchString(l) {
			cur = nil
			continue
		}
		cur.addLine(l)
	}
	return joblog.JUnit("vitest tests", byFile(fs.list, vitestSuite))
}

// vitestSuite is vitest's junit suite of a file: classname the file, name
// the titles joined with " > "; a file that failed to load is a case named
// by the file.
func vitestSuite(file string, list []*consoleFailure) joblog.Suite {
	s := joblog.Suite{Name: file}
	for _, f := range list {
		typ, msg := firstError(f.lines)
		name := strings.Join(f.titles, " > ")
		if f.suite {
			name = file
		}
		s.TestCases = append(s.TestCases, joblog.Case{ClassName: file, Name: name, Failure: &joblog.Problem{Message: msg, Type: typ, Text: joblog.Output(f.lines)}})
	}
	return s
}

// matchIf is re's submatches of l where a cheap test says it may match
// (logs are long; most of their lines are no runner's).
func matchIf(may bool, re *regexp.Regexp, l string) []string {
	if !may {
		return nil
	}
	return re.FindStringSubmatch(l)
}
