package node

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/joblog"
)

// node:test's reporters: TAP (its default where the output is no
// terminal) and spec.
var (
	tapVersionRE = regexp.MustCompile(`^TAP version \d+$`)
	tapSubtestRE = regexp.MustCompile(`^( *)# Subtest: (.+)$`)
	tapResultRE  = regexp.MustCompile(`^( *)(not ok|ok) \d+ - (.+?)(?: # (SKIP|TODO)\b.*)?$`)
	tapSummaryRE = regexp.MustCompile(`^# (tests|suites|pass|fail) \d+$`)

	specSuiteRE   = regexp.MustCompile(`^( *)▶ (.+)$`)
	specResultRE  = regexp.MustCompile(`^( *)(✔|✖|﹣|\*) (.+?) \([\d.]+ms\)(?: # (SKIP|TODO)\b.*)?$`)
	specSummaryRE = regexp.MustCompile(`^ℹ (tests|suites|pass|fail) \d+$`)
)

// maxTestDepth bounds the nesting of describe blocks read.
const maxTestDepth = 32

// testNode is a test or a describe block of node:test's output.
type testNode struct {
	name     string
	failed   bool
	skipped  bool
	suite    bool
	lines    []string
	children []*testNode
}

// testTree is node:test's tree of tests as a reporter printed it.
type testTree struct {
	roots   []*testNode
	stack   []*testNode // the open node at each depth
	count   int
	pending []string // top-level lines before the next top-level test
}

// open starts a node at depth (nil when it cannot be one).
func (t *testTree) open(depth int, name string) *testNode {
	// A file that failed to load is a top-level test named by its absolute
	// path, as the junit reporter names it; any other name is a title.
	file := depth == 0 && strings.HasPrefix(name, "/") && joblog.SafeName(name[1:])
	if depth > maxTestDepth || depth > len(t.stack) || t.count >= 10*joblog.MaxFailures || !file && !joblog.SafeName(name) {
		return nil
	}
	n := &testNode{name: name}
	t.count++
	if depth == 0 {
		n.lines, t.pending = t.pending, nil
		t.roots = append(t.roots, n)
	} else {
		p := t.stack[depth-1]
		p.children = append(p.children, n)
		p.suite = true
	}
	t.stack = append(t.stack[:depth], n)
	return n
}

// at is the open node at depth named name, if any.
func (t *testTree) at(depth int, name string) *testNode {
	if depth < len(t.stack) && t.stack[depth].name == name {
		return t.stack[depth]
	}
	return nil
}

// readNodeTestConsole reads node:test's TAP or spec output into the
// JUnit report its junit reporter writes of the same run: a testsuite per
// describe block, a testcase per test, a file that failed to load a
// top-level testcase named by its path.
func readNodeTestConsole(lines []string) []byte {
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "TAP version") && tapVersionRE.MatchString(l):
			return nodeTestJUnit(readTAP(lines))
		case strings.HasPrefix(l, "ℹ ") && specSummaryRE.MatchString(l):
			return nodeTestJUnit(readSpec(lines))
		}
	}
	return nil
}

// readTAP reads TAP: "# Subtest: name" opens a test at its depth (four
// spaces a level), "ok"/"not ok" ends it, its YAML block says why.
func readTAP(lines []string) *testTree {
	t := &testTree{}
	var cur *testNode // the node whose YAML block or diagnostics follow
	for _, l := range lines {
		if m := matchIf(strings.Contains(l, "# Subtest: "), tapSubtestRE, l); m != nil {
			t.open(len(m[1])/4, m[2])
			cur = nil
			continue
		}
		if m := matchIf(strings.Contains(l, "ok "), tapResultRE, l); m != nil {
			depth := len(m[1]) / 4
			cur = t.at(depth, m[3])
			if cur != nil {
				cur.failed, cur.skipped = m[2] == "not ok", m[4] != ""
			}
			continue
		}
		if strings.HasPrefix(l, "# ") && tapSummaryRE.MatchString(l) {
			break
		}
		switch {
		case cur != nil:
			if strings.TrimSpace(l) == "type: 'suite'" {
				cur.suite = true
			}
			if len(cur.lines) <= joblog.MaxOutputLines {
				cur.lines = append(cur.lines, l)
			}
		case strings.HasPrefix(l, "# ") && len(t.pending) <= joblog.MaxOutputLines:
			t.pending = append(t.pending, strings.TrimPrefix(l, "# "))
		}
	}
	return t
}

// readSpec reads the spec reporter: "▶ name" opens a describe block at its
// depth (two spaces a level), "✔"/"✖"/"﹣" a test's result (or the block's,
// at its own depth and name), the lines after a failed test its error; it
// stops at the summary.
func readSpec(lines []string) *testTree {
	t := &testTree{}
	var cur *testNode
	for _, l := range lines {
		if strings.HasPrefix(l, "ℹ ") && specSummaryRE.MatchString(l) {
			break
		}
		mayResult := strings.ContainsAny(l, "✔✖﹣*")
		if m := matchIf(strings.Contains(l, "▶ "), specSuiteRE, l); m != nil && !(mayResult && specResultRE.MatchString(l)) {
			t.open(len(m[1])/2, m[2])
			cur = nil
			continue
		}
		if m := matchIf(mayResult, specResultRE, l); m != nil {
			depth := len(m[1]) / 2
			n := t.at(depth, m[3])
			if n == nil || !n.suite {
				n = t.open(depth, m[3])
			}
			if n != nil {
				n.failed, n.skipped = m[2] == "✖", m[2] == "﹣" || m[4] != ""
			}
			cur = n
			continue
		}
		switch {
		case cur != nil && !cur.suite:
			if len(cur.lines) <= joblog.MaxOutputLines {
				cur.lines = append(cur.lines, l)
			}
		case len(t.pending) <= joblog.MaxOutputLines:
			t.pending = append(t.pending, l)
		}
	}
	return t
}

// nodeTestJUnit writes the tree as node:test's junit reporter does.
func nodeTestJUnit(t *testTree) []byte {
	var (
		cases  []joblog.Case
		suites []joblog.Suite
	)
	budget := joblog.MaxFailures
	for _, n := range t.roots {
		if n.suite {
			suites = append(suites, nodeTestSuite(n, &budget))
		} else if c, ok := nodeTestCase(n, &budget); ok {
			cases = append(cases, c)
		}
	}
	return joblog.Document("", cases, suites)
}

// nodeTestSuite is a describe block's suite; budget counts down the
// failures still kept.
func nodeTestSuite(n *testNode, budget *int) joblog.Suite {
	s := joblog.Suite{Name: n.name, Disabled: "0"}
	for _, c := range n.children {
		if c.suite {
			s.Suites = append(s.Suites, nodeTestSuite(c, budget))
		} else if tc, ok := nodeTestCase(c, budget); ok {
			s.TestCases = append(s.TestCases, tc)
		}
	}
	return s
}

// nodeTestCase is a test's case; false for a failure past the budget.
func nodeTestCase(n *testNode, budget *int) (joblog.Case, bool) {
	c := joblog.Case{ClassName: "test", Name: n.name}
	switch {
	case n.skipped:
		c.Skipped = &joblog.Problem{}
	case n.failed:
		if *budget--; *budget < 0 {
			return c, false
		}
		typ, msg := firstError(n.lines)
		c.Failure = &joblog.Problem{Message: msg, Type: typ, Text: joblog.Output(n.lines)}
	}
	return c, true
}
