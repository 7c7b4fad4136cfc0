package offline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
)

// Reading a JavaScript or TypeScript failure: a test is named by its file
// and its title path ("price > applies the discount"); its stack names
// functions and places ("at discount (/w/src/price.ts:8:11)", vitest's
// "❯ discount src/price.ts:8:11"); its message says what it got ("expected
// 950 to be 1000", jest's "Received: 950").

// jsStackRE is a frame of a V8 stack or of vitest's: the function, if
// named, and the place.
var jsStackRE = regexp.MustCompile(`(?m)^\s*(?:at|❯)\s+(?:async\s+)?(?:new\s+)?(?:([\w$.<>\[\] ]+?)\s+\(?)?((?:file://)?[^\s()]+?):(\d+)(?::\d+)?\)?\s*$`)

// jsStack reads the frames of a JavaScript failure's output that are in the
// repository (not node's own, not installed packages): the functions they
// name, innermost first, and their places.
func jsStack(output string) (names []string, locs []location) {
	seen := map[string]bool{}
	for _, m := range jsStackRE.FindAllStringSubmatch(output, -1) {
		p := strings.TrimPrefix(m[2], "file://")
		if strings.HasPrefix(p, "node:") || strings.Contains(p, "/node_modules/") || strings.HasPrefix(p, "node_modules/") || !isJS(p) {
			continue
		}
		n, err := strconv.Atoi(m[3])
		if err != nil {
			continue
		}
		locs = append(locs, location{path: p, line: n})
		name := m[1]
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:] // Catalog.quote, Object.discount
		}
		if name == "" || name == "<anonymous>" || strings.ContainsAny(name, "<> []") || seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, locs
}

// jsTitle is a test's own title, its describe blocks' dropped.
func jsTitle(name string) string {
	if i := strings.LastIndex(name, " > "); i >= 0 {
		return name[i+3:]
	}
	return name
}

// jsGotRE finds the value a JavaScript assertion reports getting: chai's
// and vitest's "expected 950 to be 1000", jest's "Received: 950", node's
// assert "950 !== 1000".
var jsGotRE = regexp.MustCompile(`\bexpected\s+("[^"]*"|'[^']*'|-?[\w.]+)\s+to\b|Received:\s+("[^"]*"|-?[\w.]+)|^\s*("[^"]*"|-?[\w.]+)\s+!==?\s`)

// jsGot are the values a JavaScript failure message reports getting.
func jsGot(msg string) []string {
	var out []string
	for _, m := range jsGotRE.FindAllStringSubmatch(msg, -1) {
		for _, g := range m[1:] {
			if g != "" {
				if strings.HasPrefix(g, "'") {
					g = `"` + strings.Trim(g, "'") + `"`
				}
				out = append(out, g)
			}
		}
	}
	return out
}

// jsNotCalls are the names a JavaScript test calls that are not the code
// under test: the runners' functions and the language's own. Matchers
// ("toBe", "toEqual") are left out by their form.
var jsNotCalls = map[string]bool{
	"it": true, "test": true, "describe": true, "expect": true, "beforeEach": true, "afterEach": true,
	"beforeAll": true, "afterAll": true, "each": true, "only": true, "skip": true, "todo": true, "vi": true,
	"jest": true, "fn": true, "mock": true, "spyOn": true, "require": true, "assert": true, "equal": true,
	"strictEqual": true, "deepEqual": true, "deepStrictEqual": true, "ok": true, "throws": true, "rejects": true,
	"resolves": true, "not": true, "if": true, "for": true, "while": true, "switch": true, "return": true,
	"function": true, "catch": true, "Number": true, "String": true, "Boolean": true, "Array": true,
	"Object": true, "Math": true, "JSON": true, "Promise": true, "Date": true, "Map": true, "Set": true,
	"parseInt": true, "parseFloat": true, "isNaN": true, "push": true, "map": true, "filter": true,
	"forEach": true, "reduce": true, "keys": true, "values": true, "entries": true, "from": true, "of": true,
	"async": true, "await": true, "new": true, "typeof": true, "then": true, "log": true, "stringify": true,
}

// jsNotCall reports a name a JavaScript test calls that is not under test.
func jsNotCall(name string) bool {
	if jsNotCalls[name] {
		return true
	}
	return len(name) > 2 && strings.HasPrefix(name, "to") && name[2] >= 'A' && name[2] <= 'Z'
}

// jsTestCallRE is the head of a test's call: it, test, and their forms
// (it.each(…)(…), test.only).
var jsTestCallRE = regexp.MustCompile(`\b(?:it|test)(?:\.\w+)*\s*\(`)

// jsTestLine is the line of m where the test titled title is declared:
// an it or test call whose first string is the title. ok is false when no
// line or more than one has it.
func jsTestLine(m *fileModel, title string) (int, bool) {
	found := 0
	for i, l := range m.lines {
		if l == unknown {
			continue
		}
		loc := jsTestCallRE.FindStringIndex(l)
		if loc == nil {
			continue
		}
		rest := strings.TrimLeft(l[loc[1]:], " \t")
		for _, q := range []string{`"`, `'`, "`"} {
			if strings.HasPrefix(rest, q+title+q) {
				if found != 0 {
					return 0, false
				}
				found = i + 1
			}
		}
	}
	return found, found != 0
}

// readJSTest reads the file of the failing JavaScript test (its package)
// and records the names its test calls.
func (s *state) readJSTest(try func(string, string, any) (harness.Action, bool)) (harness.Action, bool) {
	f := s.failures[0]
	title := jsTitle(f.Test)
	p := f.Package
	if rp, ok := s.resolve(p); ok {
		p = rp
	}
	m := s.models[p]
	if m == nil {
		if a, ok := try(tools.ReadFile, fmt.Sprintf(
			"Read %s, where the failing test %q is, to see which functions it exercises and which tests sit next to it.", p, title),
			tools.ReadFileArgs{Path: p}); ok {
			return a, true
		}
		s.testRead = true
		return harness.Action{}, false
	}
	s.testRead = true
	n, ok := jsTestLine(m, title)
	if !ok {
		for _, fr := range s.frameRefs() {
			if rp, found := s.resolve(fr.path); found && rp == p {
				n, ok = fr.line, true
				break
			}
		}
	}
	if ok {
		s.collectJSCalls(m, n)
	}
	return harness.Action{}, false
}

// collectJSCalls records the names called by the test (an it or test call
// with its callback) holding line n of m.
func (s *state) collectJSCalls(m *fileModel, n int) {
	start, end := n-25, n+25
	for k := n; k >= 1; k-- {
		l, ok := m.line(k)
		if !ok {
			break
		}
		if jsTestCallRE.MatchString(l) {
			if e, ok := m.jsCallEnd(k); ok && e >= n {
				start, end = k, e
			}
			break
		}
	}
	for i := start; i <= end; i++ {
		t, ok := m.line(i)
		if !ok {
			continue
		}
		for _, c := range callRE.FindAllStringSubmatch(t, -1) {
			if !jsNotCall(c[1]) {
				s.called[c[1]] = true
			}
		}
	}
}

// jsTestFile is the failing JavaScript test's file when the policy has read
// it and it holds other tests: the tests a candidate must not break.
func (s *state) jsTestFile() (string, bool) {
	if len(s.failures) == 0 || !isJS(s.failures[0].Package) {
		return "", false
	}
	m := s.models[s.failures[0].Package]
	if m == nil {
		return "", false
	}
	tests := 0
	for _, l := range m.lines {
		if l != unknown && jsTestCallRE.MatchString(l) {
			tests++
		}
	}
	return s.failures[0].Package, tests > len(s.failures)
}
