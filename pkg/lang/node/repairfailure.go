package node

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// Reading a JavaScript or TypeScript failure: a test is named by its file
// and its title path ("price > applies the discount"); its stack names
// functions and places ("at discount (/w/src/price.ts:8:11)", vitest's
// "❯ discount src/price.ts:8:11"); its message says what it got ("expected
// 950 to be 1000", jest's "Received: 950").

// repairStackRE is a frame of a V8 stack or of vitest's: the function, if
// named, and the place.
var repairStackRE = regexp.MustCompile(`(?m)^\s*(?:at|❯)\s+(?:async\s+)?(?:new\s+)?(?:([\w$.<>\[\] ]+?)\s+\(?)?((?:file://)?[^\s()]+?):(\d+)(?::\d+)?\)?\s*$`)

// jsStack reads the frames of a JavaScript failure's output that are in the
// repository (not node's own, not installed packages): the functions they
// name, innermost first, and their places.
func jsStack(output string) (names []string, locs []dialect.Location) {
	seen := map[string]bool{}
	for _, m := range repairStackRE.FindAllStringSubmatch(output, -1) {
		p := strings.TrimPrefix(m[2], "file://")
		if strings.HasPrefix(p, "node:") || strings.Contains(p, "/node_modules/") || strings.HasPrefix(p, "node_modules/") || !isJS(p) {
			continue
		}
		n, err := strconv.Atoi(m[3])
		if err != nil {
			continue
		}
		locs = append(locs, dialect.Location{Path: p, Line: n})
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
func jsTestLine(m dialect.Lines, title string) (int, bool) {
	found := 0
	for i := range m.Len() {
		l, known := m.Line(i + 1)
		if !known {
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

// jsTestCall is the span of the test's call (an it or test call with its
// callback) holding line n of m.
func jsTestCall(m dialect.Lines, n int, cache *any) (start, end int, ok bool) {
	for k := n; k >= 1; k-- {
		l, known := m.Line(k)
		if !known {
			break
		}
		if jsTestCallRE.MatchString(l) {
			if e, found := jsCallEnd(m, k, cache); found && e >= n {
				return k, e, true
			}
			break
		}
	}
	return 0, 0, false
}

// jsTests counts the tests m declares: its it and test calls.
func jsTests(m dialect.Lines) int {
	tests := 0
	for n := 1; n <= m.Len(); n++ {
		if l, known := m.Line(n); known && jsTestCallRE.MatchString(l) {
			tests++
		}
	}
	return tests
}
