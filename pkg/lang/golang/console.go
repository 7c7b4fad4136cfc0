package golang

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/joblog"
)

// go test's own lines.
var (
	runRE     = regexp.MustCompile(`^=== (RUN|CONT|PAUSE|NAME)\s+(\S+)`)
	resultRE  = regexp.MustCompile(`^(\s*)--- (FAIL|PASS|SKIP): (\S+)(?: \([0-9.]+s\))?`)
	pkgOKRE   = regexp.MustCompile(`^ok\s+(\S+)\s+(?:\([^)]*\)|[0-9.]+s|\[no tests to run\])`)
	pkgFailRE = regexp.MustCompile(`^FAIL\s+(\S+)\s+(?:[0-9.]+s|\[build failed\]|\[setup failed\])`)
	noTestsRE = regexp.MustCompile(`^\?\s+(\S+)\s+\[no test files\]`)
	buildRE   = regexp.MustCompile(`^# (\S+)`)
)

// maxConsoleTests bounds the tests read of one package's output; with the
// packages' own failures, a log gives at most joblog.MaxFailures.
const maxConsoleTests = joblog.MaxFailures/2 - 1

// event is one line of go test -json.
type event struct {
	Action  string
	Package string `json:",omitempty"`
	Test    string `json:",omitempty"`
	Output  string `json:",omitempty"`
}

// testBlock is what the log says about one test.
type testBlock struct {
	name   string
	result string // "fail", "pass", "skip" or "" (never finished)
	output []string
}

// ReadConsole is the go test output of a CI job's log (its lines as
// pkg/joblog cleans them) as go test -json events (GoTestText); nil when
// the log holds none.
func (Driver) ReadConsole(lines []string) []byte { return GoTestText(lines) }

// GoTestText converts the plain-text output of `go test` (with or without
// -v, one or several packages, as found in a CI log) into go test -json
// events, which the report parser reads: every test that a "--- FAIL"
// line names, with its output, and each package that did not build. It
// returns nil when the text holds no go test result at all. A test whose
// name could not be a test's (joblog.SafeName) is left out, and at most
// joblog.MaxFailures failures are read of a log.
//
// Output is attributed the way go test prints it: in -v mode the lines
// between a test's "=== RUN" (or "=== CONT") and the next marker, and in
// both modes the lines indented under its "--- FAIL" line; a panic that
// follows a "--- FAIL" line belongs to that test.
func GoTestText(lines []string) []byte {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	failures := 0 // failed tests and packages emitted
	emit := func(e event) {
		if e.Action == "fail" {
			failures++
		}
		_ = enc.Encode(e)
	}

	var (
		block     []string // lines since the last package result
		buildPkgs = map[string][]string{}
		buildPkg  string
	)
	for _, l := range lines {
		if failures+maxConsoleTests+1 > joblog.MaxFailures {
			break // one more package could pass the bound
		}
		if m := matchIf(strings.HasPrefix(l, "# "), buildRE, l); m != nil {
			buildPkg = m[1] // the compiler's errors for this package follow
			if _, ok := buildPkgs[buildPkg]; !ok && len(buildPkgs) >= joblog.MaxFailures {
				buildPkg = "" // one package too many: its errors are not kept
			}
			continue
		}
		if buildPkg != "" {
			if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "##[") || l == "" {
				buildPkg = ""
			} else {
				if len(buildPkgs[buildPkg]) < joblog.MaxOutputLines {
					buildPkgs[buildPkg] = append(buildPkgs[buildPkg], l)
				}
				continue
			}
		}
		if m := matchIf(strings.HasPrefix(l, "FAIL"), pkgFailRE, l); m != nil && joblog.SafeName(m[1]) {
			pkg := m[1]
			if strings.Contains(l, "[build failed]") || strings.Contains(l, "[setup failed]") {
				var msg []string
				for name, ls := range buildPkgs {
					if name == pkg || strings.HasPrefix(name, pkg+" ") || strings.HasPrefix(name, pkg+"_test") || len(buildPkgs) == 1 {
						msg = append(msg, ls...)
						delete(buildPkgs, name) // a package's errors are told once
					}
				}
				emit(event{Action: "start", Package: pkg})
				for _, m := range msg {
					emit(event{Action: "output", Package: pkg, Output: m + "\n"})
				}
				emit(event{Action: "output", Package: pkg, Output: l + "\n"})
				emit(event{Action: "fail", Package: pkg})
			} else {
				emitPackage(emit, pkg, block, "fail")
			}
			block = nil
			continue
		}
		if m := matchIf(strings.HasPrefix(l, "ok"), pkgOKRE, l); m != nil && joblog.SafeName(m[1]) {
			emitPackage(emit, m[1], block, "pass")
			block = nil
			continue
		}
		if strings.HasPrefix(l, "?") && noTestsRE.MatchString(l) {
			continue
		}
		block = append(block, l)
	}
	if out.Len() == 0 {
		return nil
	}
	return out.Bytes()
}

// emitPackage writes the events of one package's block of output.
func emitPackage(emit func(event), pkg string, lines []string, result string) {
	tests := parseBlock(lines)
	failed := 0
	for _, t := range tests {
		if t.result == "fail" {
			failed++
		}
	}
	emit(event{Action: "start", Package: pkg})
	for _, t := range tests {
		emit(event{Action: "run", Package: pkg, Test: t.name})
		for _, o := range t.output {
			emit(event{Action: "output", Package: pkg, Test: t.name, Output: o + "\n"})
		}
		action := t.result
		if action == "" {
			// Started and never finished: the package failed under it
			// (a timeout, a crash); count it as failed when the package
			// failed with no other failure.
			if result == "fail" && failed == 0 {
				action = "fail"
			} else {
				action = "pass"
			}
		}
		emit(event{Action: action, Package: pkg, Test: t.name})
	}
	emit(event{Action: result, Package: pkg})
}

// parseBlock finds the tests of one package's output and their output.
func parseBlock(lines []string) []*testBlock {
	var (
		order   []*testBlock
		byName  = map[string]*testBlock{}
		current *testBlock // the test whose output runs now (-v mode)
		under   *testBlock // the test whose "--- FAIL" line we are under
		indent  int        // that line's indentation
		panicky bool       // a panic follows a failed test: the rest is its
	)
	get := func(name string) *testBlock {
		t, ok := byName[name]
		if !ok && (!joblog.SafeName(name) || len(order) >= maxConsoleTests) {
			return nil
		}
		if !ok {
			t = &testBlock{name: name}
			byName[name] = t
			order = append(order, t)
		}
		return t
	}
	for _, l := range lines {
		if panicky && under != nil {
			if l == "FAIL" || strings.HasPrefix(l, "exit status ") {
				continue
			}
			under.output = append(under.output, l)
			continue
		}
		if m := matchIf(strings.HasPrefix(l, "=== "), runRE, l); m != nil {
			t := get(m[2])
			if t != nil && (m[1] == "RUN" || m[1] == "CONT" || m[1] == "NAME") {
				current = t
			} else {
				current = nil
			}
			under = nil
			continue
		}
		if m := matchIf(strings.Contains(l, "--- "), resultRE, l); m != nil {
			t := get(m[3])
			if t == nil {
				under, current = nil, nil
				continue
			}
			t.result = strings.ToLower(m[2])
			under, indent, current = t, len(m[1]), nil
			if t.result != "fail" {
				under = nil
			}
			// A failed subtest makes its parents fail too.
			for name := m[3]; strings.Contains(name, "/"); {
				name = name[:strings.LastIndex(name, "/")]
				if p := byName[name]; p != nil && t.result == "fail" {
					p.result = "fail"
				}
			}
			continue
		}
		if l == "FAIL" || l == "PASS" || strings.HasPrefix(l, "exit status ") || strings.HasPrefix(l, "##[") {
			under, current = nil, nil
			continue
		}
		if strings.HasPrefix(l, "panic: ") && under != nil {
			panicky = true
			under.output = append(under.output, l)
			continue
		}
		if under != nil && leading(l) > indent && strings.TrimSpace(l) != "" {
			under.output = append(under.output, dedent(l, indent+4))
			continue
		}
		if under != nil {
			under = nil
		}
		if current != nil {
			current.output = append(current.output, l)
		}
	}
	return order
}

func leading(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// dedent takes away up to n leading spaces.
func dedent(s string, n int) string {
	i := 0
	for i < n && i < len(s) && s[i] == ' ' {
		i++
	}
	return "    " + s[i:]
}

// matchIf is re's submatches of l where a cheap test says it may match
// (logs are long; most of their lines are no runner's).
func matchIf(may bool, re *regexp.Regexp, l string) []string {
	if !may {
		return nil
	}
	return re.FindStringSubmatch(l)
}
