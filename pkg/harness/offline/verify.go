package offline

import (
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
)

// Verifying a candidate: after its edit, the failing tests; when they pass,
// the tests next to them; when anything fails, the undo; when an edit did
// not apply as expected, a re-read of the file and, if need be, a restore.

// applied reports whether an edit applied.
func applied(obs tools.Observation) bool {
	if obs.Edit != nil {
		return obs.Edit.Applied
	}
	return !obs.IsError
}

// afterApply takes in a candidate's edit: if it applied cleanly, the tests
// come next; if not, the candidate is done, and the file is re-read once.
func (s *state) afterApply(obs tools.Observation) {
	c := s.cur
	if !applied(obs) {
		s.tried = append(s.tried, tried{c, "did not apply: " + firstLine(obs.Content)})
		s.cur, s.mode = nil, modeIdle
		if !s.refresh[c.Path] {
			s.refresh[c.Path] = true
			s.mode, s.stale = modeRefresh, c.Path // our copy of the file may be stale
		}
		return
	}
	s.models[c.Path].lines = append([]string(nil), s.curAfter...)
	// The harness reports only the findings an edit brings, not the
	// file's old ones.
	if obs.Edit != nil && strings.TrimSpace(obs.Edit.Diagnostics) != "" {
		s.tried = append(s.tried, tried{c, "static analysis: " + firstLine(obs.Edit.Diagnostics)})
		s.mode = modeUndo
		return
	}
	s.mode = modeTest
}

// afterTest takes in the failing tests' run with a candidate in.
func (s *state) afterTest(obs tools.Observation) {
	if obs.Tests != nil && obs.Tests.OK && s.curRevert != "" {
		// A revert passes: say so, and undo it.
		s.revertPassed, s.revertWhy = s.cur, s.curRevert
		s.tried = append(s.tried, tried{s.cur, "passes, but " + s.curRevert + ": a revert, not a fix"})
		s.mode = modeUndo
		return
	}
	if obs.Tests != nil && obs.Tests.OK {
		s.mode = modeFixed
		if len(s.otherTests()) > 0 {
			s.mode = modeRegress
		}
		return
	}
	why := "tests still fail"
	if obs.Tests != nil {
		switch {
		case obs.Tests.Stopped:
			why = "the tests did not finish (stopped: a loop or a wait it brings?)"
		case len(obs.Tests.Build) > 0:
			why = "does not build: " + obs.Tests.Build[0].Message
		case len(obs.Tests.Failed) > 0:
			why = "tests still fail: " + obs.Tests.Failed[0].Message
		}
	}
	s.tried = append(s.tried, tried{s.cur, why})
	s.mode = modeUndo
}

// afterRegress takes in the run of the tests around the failing ones.
func (s *state) afterRegress(obs tools.Observation) {
	if obs.Tests != nil && obs.Tests.OK {
		s.regressed = true
		s.mode = modeFixed
		return
	}
	why := "the tests around it fail"
	if obs.Tests != nil {
		var names []string
		for _, f := range append(append([]task.Failure(nil), obs.Tests.Failed...), obs.Tests.Build...) {
			names = append(names, f.Test)
		}
		if len(names) > 0 {
			why = "passes the failing tests but breaks " + strings.Join(names, ", ")
		}
	}
	s.tried = append(s.tried, tried{s.cur, why})
	s.mode = modeUndo
}

// otherTests are the IDs of the tests seen next to the failing ones, in the
// test files the policy has read: a candidate must not break them. For a
// test named by its file and title, its file, run whole (a test's id is
// its title path, which a line of the file does not hold).
func (s *state) otherTests() []string {
	if p, ok := s.testFile(); ok {
		return []string{p}
	}
	if len(s.failures) > 0 && s.p.langs.byFile(s.failures[0].Package) != nil {
		return nil
	}
	oracle := map[string]bool{}
	pkg := ""
	for _, f := range s.failures {
		oracle[testFunc(f.Test)] = true
		if pkg == "" {
			pkg = f.Package
		}
	}
	var ids []string
	seen := map[string]bool{}
	for p, m := range s.models {
		d := m.d
		switch {
		case d == nil || d.TestFunc == nil:
			continue
		case task.IsTestFilePath(pkg):
			// A test named by its file: the module-level tests of the
			// failing test's file.
			if p != pkg {
				continue
			}
		case d.PackageTest == nil || !d.PackageTest(p, pkg):
			continue
		}
		re := d.TestFunc
		for _, l := range m.lines {
			mm := re.FindStringSubmatch(l)
			if mm == nil || oracle[mm[1]] || seen[mm[1]] {
				continue
			}
			seen[mm[1]] = true
			id := mm[1]
			if pkg != "" {
				id = task.Failure{Package: pkg, Test: id}.ID()
			}
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// testFunc is the function of a failing test: Go's top-level test of a
// subtest ("TestX/case" → "TestX"), Python's function of a node id's test
// part ("TestC::test_y[p]" → "test_y").
func testFunc(test string) string {
	test, _, _ = strings.Cut(test, "[")
	test, _, _ = strings.Cut(test, "/")
	if i := strings.LastIndex(test, "::"); i >= 0 {
		test = test[i+2:]
	}
	return test
}

// afterUndo takes in the edit that undid (or restored) a candidate.
func (s *state) afterUndo(obs tools.Observation) {
	c := s.cur
	if !applied(obs) {
		s.mode, s.stale = modeRefresh, c.Path
		return
	}
	s.models[c.Path].lines = append([]string(nil), s.pristine[c.Path]...)
	s.cur, s.mode = nil, modeIdle
}

// afterRefresh handles a file read after an edit did not apply: if the file
// is not as the policy left it, put it back.
func (s *state) afterRefresh(p string) {
	m := s.models[p]
	orig, ok := s.pristine[p]
	if !ok {
		s.mode = modeIdle
		return
	}
	if s.cur == nil {
		// A candidate did not apply: the fresh copy is the truth now.
		if m.complete() {
			s.pristine[p] = append([]string(nil), m.lines...)
		}
		s.mode = modeIdle
		return
	}
	if equalLines(m.lines, orig) {
		s.cur, s.mode = nil, modeIdle
		return
	}
	s.mode = modeRestore
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (s *state) lastOutcome() string {
	if n := len(s.tried); n > 0 {
		return s.tried[n-1].outcome
	}
	return "tests still fail"
}
