package python

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/joblog"
)

// pytest's console output, as CI prints it.
var (
	// A section's rule: "===== FAILURES =====", "=== short test summary info ===".
	ruleRE = regexp.MustCompile(`^={3,} ?(.*?) ?={3,}$`)
	// A test's or a collection's heading in FAILURES and ERRORS:
	// "____ TestC.test_y ____", "____ ERROR collecting tests/test_x.py ____".
	headingRE = regexp.MustCompile(`^_{3,} (.+?) _{3,}$`)
	// A verbose (-v) result line: "tests/test_x.py::test_y PASSED  [ 50%]",
	// or pytest-xdist's "[gw0] [ 50%] PASSED tests/test_x.py::test_y".
	verboseRE = regexp.MustCompile(`^(\S[^ ]*?::\S.*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b`)
	xdistRE   = regexp.MustCompile(`^\[gw\d+\] \[ *\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S.*?::\S.*?)\s*$`)
	// A line of the short test summary (-r): "FAILED tests/test_x.py::test_y - msg".
	summaryRE = regexp.MustCompile(`^(PASSED|FAILED|ERROR|XPASS) (\S.*?)(?: - .*)?$`)
	// A source location in a traceback: "tests/test_x.py:12: AssertionError".
	locationRE = regexp.MustCompile(`^(\S+\.py):\d+: `)
)

// pytestConsole is what a log says of a pytest run.
type pytestConsole struct {
	seen     bool              // a pytest run's lines were found
	order    []string          // node ids, in the order first seen
	outcome  map[string]string // node id → PASSED, FAILED, ERROR, SKIPPED…
	sections []consoleSection  // FAILURES' and ERRORS' sections
}

// consoleSection is one heading of FAILURES or ERRORS and its lines.
type consoleSection struct {
	heading string
	errors  bool // under ERRORS (a collection's, a fixture's error)
	lines   []string
}

// ReadConsole reads pytest's console output in a CI job's log (the
// default output, -v, -r's short test summary; lines as pkg/joblog cleans
// them) into the JUnit XML pytest's --junitxml writes for the same run:
// the same test ids, a module that failed to collect as pytest reports
// it. nil when the log holds no pytest run.
func (Driver) ReadConsole(lines []string) []byte {
	c := readPytestConsole(lines)
	if !c.seen {
		return nil
	}
	return c.junit()
}

func readPytestConsole(lines []string) *pytestConsole {
	c := &pytestConsole{outcome: map[string]string{}}
	var (
		part string // the rule's title we are under
		sec  *consoleSection
	)
	for _, l := range lines {
		if m := matchIf(strings.HasPrefix(l, "==="), ruleRE, l); m != nil {
			part, sec = m[1], nil
			switch {
			case strings.HasPrefix(part, "test session starts"), part == "FAILURES", part == "ERRORS", part == "short test summary info":
				c.seen = true
			}
			continue
		}
		if (part == "FAILURES" || part == "ERRORS") && len(c.sections) < joblog.MaxFailures {
			if m := matchIf(strings.HasPrefix(l, "___"), headingRE, l); m != nil {
				c.sections = append(c.sections, consoleSection{heading: m[1], errors: part == "ERRORS"})
				sec = &c.sections[len(c.sections)-1]
				continue
			}
			if sec != nil && len(sec.lines) <= joblog.MaxOutputLines {
				sec.lines = append(sec.lines, l)
			}
			continue
		}
		switch {
		case part == "short test summary info":
			if m := summaryRE.FindStringSubmatch(l); m != nil {
				c.record(m[2], m[1])
			}
		case !strings.Contains(l, "::"):
		case strings.HasPrefix(l, "[gw"):
			if m := xdistRE.FindStringSubmatch(l); m != nil {
				c.record(m[2], m[1])
			}
		default:
			if m := verboseRE.FindStringSubmatch(l); m != nil {
				c.record(m[1], m[2])
			}
		}
	}
	return c
}

// record notes a test's outcome; a later line (the summary after the
// verbose line) agrees or says more.
func (c *pytestConsole) record(id, outcome string) {
	id = strings.TrimSpace(id)
	if !joblog.SafeName(id) {
		return
	}
	if _, ok := c.outcome[id]; !ok {
		if len(c.order) >= 10*joblog.MaxFailures {
			return
		}
		c.order = append(c.order, id)
	}
	c.outcome[id] = outcome
}

// junit is the report of the run as pytest's --junitxml writes it.
func (c *pytestConsole) junit() []byte {
	failed := map[string]*consoleSection{} // node id (or a module's path) → its section
	for i := range c.sections {
		s := &c.sections[i]
		if id := c.sectionID(s, failed); id != "" {
			failed[id] = s
		}
	}
	var cases []joblog.Case
	bad := 0
	for _, id := range c.order {
		if o := c.outcome[id]; o == "FAILED" || o == "ERROR" {
			if bad++; bad > joblog.MaxFailures {
				continue
			}
		}
		cases = append(cases, pytestCase(id, c.outcome[id], failed[id]))
	}
	if len(cases) == 0 {
		return nil
	}
	return joblog.JUnit("", []joblog.Suite{{Name: "pytest", TestCases: cases}})
}

// sectionID is the node id (a module's path, for a collection error) of a
// section's heading; it records the outcome the section implies when no
// line said it. "" when the heading names nothing that could be a test.
func (c *pytestConsole) sectionID(s *consoleSection, taken map[string]*consoleSection) string {
	h := s.heading
	outcome := "FAILED"
	if s.errors {
		outcome = "ERROR"
		if p, ok := strings.CutPrefix(h, "ERROR collecting "); ok {
			c.record(p, outcome)
			return p
		}
		for _, pre := range []string{"ERROR at setup of ", "ERROR at teardown of "} {
			h = strings.TrimPrefix(h, pre)
		}
	}
	for _, id := range c.order {
		_, rest, ok := strings.Cut(id, "::")
		if ok && taken[id] == nil && c.outcome[id] == outcome && strings.ReplaceAll(rest, "::", ".") == h {
			return id
		}
	}
	// No line named it (no -v, no summary): the test's file is where its
	// traceback starts.
	for _, l := range s.lines {
		if m := locationRE.FindStringSubmatch(l); m != nil && isTestModule(m[1]) {
			base, params := cutParams(h)
			id := m[1] + "::" + strings.ReplaceAll(base, ".", "::") + params
			if _, seen := c.outcome[id]; !seen {
				c.record(id, outcome)
			}
			if _, ok := c.outcome[id]; ok {
				return id
			}
			return ""
		}
	}
	return ""
}

// pytestCase is the <testcase> of a node id, with its section's text.
func pytestCase(id, outcome string, s *consoleSection) joblog.Case {
	tc := joblog.Case{}
	tc.ClassName, tc.Name = pytestJUnitName(id)
	var text, msg string
	if s != nil {
		text, msg = joblog.Output(s.lines), errorMessage(s.lines)
	}
	switch {
	case outcome == "ERROR" && !strings.Contains(id, "::"):
		tc.Error = &joblog.Problem{Message: "collection failure", Text: text}
	case outcome == "ERROR":
		tc.Error = &joblog.Problem{Message: msg, Text: text}
	case outcome == "FAILED":
		tc.Failure = &joblog.Problem{Message: msg, Text: text}
	case outcome == "SKIPPED":
		tc.Skipped = &joblog.Problem{Type: "pytest.skip"}
	case outcome == "XFAIL":
		tc.Skipped = &joblog.Problem{Type: "pytest.xfail"}
	}
	return tc
}

// pytestJUnitName is a node id as --junitxml names it: the module's
// dotted path and its classes as classname, the test as name; a module
// alone (a collection error) is a name with no classname.
func pytestJUnitName(id string) (classname, name string) {
	path, params, hasParams := strings.Cut(id, "[")
	names := strings.Split(path, "::")
	names[0] = strings.TrimSuffix(strings.ReplaceAll(names[0], "/", "."), ".py")
	if hasParams {
		names[len(names)-1] += "[" + params
	}
	return strings.Join(names[:len(names)-1], "."), names[len(names)-1]
}

// errorMessage is a traceback's last "E" block, as pytest's report
// message has it: the exception and the assertion's explanation, their
// common indentation taken away.
func errorMessage(lines []string) string {
	var block []string
	for i, l := range lines {
		if !strings.HasPrefix(l, "E ") {
			continue
		}
		if i == 0 || !strings.HasPrefix(lines[i-1], "E ") {
			block = block[:0]
		}
		block = append(block, l[1:])
	}
	indent := -1
	for _, l := range block {
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range block {
		block[i] = l[min(indent, len(l)):]
	}
	return strings.Join(block, "\n")
}

// matchIf is re's submatches of l where a cheap test says it may match
// (logs are long; most of their lines are no runner's).
func matchIf(may bool, re *regexp.Regexp, l string) []string {
	if !may {
		return nil
	}
	return re.FindStringSubmatch(l)
}
