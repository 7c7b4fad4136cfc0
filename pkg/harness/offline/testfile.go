package offline

import (
	"fmt"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/offline/dialect"
	"github.com/redfix/redfix/pkg/harness/tools"
)

// Reading a failing test in a language that names a test by its file and
// its title: the failure's package is the test's file, the test is found
// there by its title, and the names its call (with its callback) calls are
// what it exercises.

// readFileTest reads the file of the failing test (its package), in a
// language d that names tests by file and title, and records the names its
// test calls.
func (s *state) readFileTest(d *dialect.Dialect, try func(string, string, any) (harness.Action, bool)) (harness.Action, bool) {
	f := s.failures[0]
	title := d.Title(f.Test)
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
	n, ok := d.TestLine(modelLines{m}, title)
	if !ok {
		for _, fr := range s.frameRefs() {
			if rp, found := s.resolve(fr.path); found && rp == p {
				n, ok = fr.line, true
				break
			}
		}
	}
	if ok {
		s.collectTestCalls(d, m, n)
	}
	return harness.Action{}, false
}

// collectTestCalls records the names called by the test (its call, with
// its callback, in d) holding line n of m; 25 lines around n when d does
// not find the call.
func (s *state) collectTestCalls(d *dialect.Dialect, m *fileModel, n int) {
	start, end, ok := d.TestCall(modelLines{m}, n, &m.cache)
	if !ok {
		start, end = n-25, n+25
	}
	for i := start; i <= end; i++ {
		t, ok := m.line(i)
		if !ok {
			continue
		}
		for _, c := range callRE.FindAllStringSubmatch(t, -1) {
			if !d.NotCall(c[1]) {
				s.called[c[1]] = true
			}
		}
	}
}

// testFile is the failing test's file, in a language that names tests by
// file, when the policy has read it and it holds other tests: the tests a
// candidate must not break.
func (s *state) testFile() (string, bool) {
	if len(s.failures) == 0 {
		return "", false
	}
	d := s.p.langs.byFile(s.failures[0].Package)
	if d == nil {
		return "", false
	}
	m := s.models[s.failures[0].Package]
	if m == nil {
		return "", false
	}
	return s.failures[0].Package, d.Tests(modelLines{m}) > len(s.failures)
}
