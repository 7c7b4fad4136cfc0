package offline

import (
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
)

// Deciding: the next action from the state. A candidate in progress comes
// first (test it, check the tests around it, undo it); then the task, the
// blame commit and a reproduction; then the reads localization wants; then
// the candidates, one at a time; then the exit.

func (s *state) decide(ep *harness.Episode) harness.Action {
	maxSteps := ep.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	left := maxSteps - len(ep.Steps) // steps left, this one included

	if a, ok := s.inProgress(left); ok {
		return a
	}
	if a, ok := s.begin(); ok {
		return a
	}
	if s.wantsLocalize(left) {
		return s.localize()
	}
	if a, ok := s.nextRead(left); ok {
		return a
	}
	if !s.built {
		s.build()
	}
	// Candidates: edit, run_tests (twice with a regression check), undo,
	// and an exit after them.
	need := 4
	if len(s.otherTests()) > 0 {
		need = 5
	}
	if a, ok := s.nextCandidate(left, need); ok {
		return a
	}
	if a, ok := s.nextRevert(left); ok {
		return a
	}
	if s.next < len(s.cands) {
		return s.exit(s.summary(fmt.Sprintf("No candidate passed before the step budget ran out (%d of %d candidates left untried).", len(s.cands)-s.next, len(s.cands))))
	}
	return s.exit(s.summary("No candidate passed."))
}

// inProgress is the next step of a candidate in progress (test it, check
// the tests around it, undo it, restore its file), or the exit a mode
// calls for; false when the policy is idle.
func (s *state) inProgress(left int) (harness.Action, bool) {
	switch s.mode {
	case modeFixed:
		return s.exitNow(s.fixedSummary())
	case modeIdle:
		if s.revertPassed != nil {
			summary := s.revertSummary()
			s.done = true
			return s.actNow(intentNone, tools.Exit, "Done: "+firstLine(summary), tools.ExitArgs{Summary: summary, RevertPasses: true})
		}
	case modeStuck:
		return s.exitNow(s.summary("I could not restore " + s.cur.Path + " after a failed candidate; the workspace may hold a partial change and should not be used."))
	case modeRegress:
		if left >= 2 {
			others := s.otherTests()
			thought := fmt.Sprintf("The failing tests pass. Before calling it fixed, run the %d other test(s) next to them (%s) so the change breaks nothing.",
				len(others), strings.Join(shortNames(others, 4), ", "))
			if p, ok := s.testFile(); ok {
				thought = fmt.Sprintf("The failing tests pass. Before calling it fixed, run every test of %s, their file, so the change breaks nothing.", p)
			}
			return s.actNow(intentRegress, tools.RunTests, thought, tools.RunTestsArgs{Tests: append(s.task.Tests(), others...)})
		}
		s.mode = modeFixed
		return s.exitNow(s.fixedSummary())
	case modeTest:
		if left >= 2 {
			return s.actNow(intentTest, tools.RunTests, fmt.Sprintf(
				"The edit applied cleanly. Run the failing tests to see whether %s fixes them.", s.cur.What), tools.RunTestsArgs{})
		}
		s.mode = modeUndo
		fallthrough
	case modeUndo:
		if left >= 2 {
			return s.actNow(intentUndo, tools.Edit, fmt.Sprintf(
				"That did not work (%s). Undo it so the next hypothesis starts from the original code.", s.lastOutcome()),
				tools.EditArgs{Path: s.cur.Path, Blocks: s.curInv})
		}
	case modeRefresh:
		p := s.stale
		if left >= 3 && p != "" {
			return s.actNow(intentRefresh, tools.ReadFile, fmt.Sprintf(
				"The edit did not apply as expected. Re-read %s to see its current contents.", p), tools.ReadFileArgs{Path: p})
		}
	case modeRestore:
		if left >= 2 {
			if a, ok := s.restore(); ok {
				return a, true
			}
		}
		s.mode = modeStuck
		return s.exitNow(s.summary("I could not restore " + s.cur.Path + " after a failed candidate; the workspace may hold a partial change and should not be used."))
	}
	if s.mode != modeIdle {
		return s.exitNow(s.summary("The step budget ran out in the middle of a candidate; the last edit may still be in the workspace."))
	}

	return harness.Action{}, false
}

// begin is the start of every episode: the task, the blame commit's diff
// and a reproduction, in that order; an exit when the failure does not
// reproduce.
func (s *state) begin() (harness.Action, bool) {
	if !s.sawTask {
		return s.actNow(intentNone, tools.GetTaskDetails,
			"Start with the task: which tests fail, with what message and stack trace, and which commit broke them.", nil)
	}
	if s.task.Bisection.Blame != "" && !s.diffTried {
		return s.actNow(intentNone, tools.GetDiffDetails, fmt.Sprintf(
			"Bisection blames commit %s. Its diff is the most likely place for the bug: read it.", task.Short(s.task.Bisection.Blame)), tools.GetDiffDetailsArgs{})
	}
	if !s.reproTried && s.repro == nil {
		return s.actNow(intentNone, tools.RunTests,
			"Reproduce the failure before changing anything, to see the current message and frames.", tools.RunTestsArgs{})
	}
	if s.repro != nil && s.repro.OK {
		return s.exitNow("The failing tests pass in this workspace: I could not reproduce the failure, so I changed nothing.")
	}
	if len(s.failures) == 0 {
		s.failures = s.task.Failures
	}
	return harness.Action{}, false
}

// nextCandidate applies the next candidate not tried yet, when need steps
// are left for it; a candidate that reads as a revert is held back.
func (s *state) nextCandidate(left, need int) (harness.Action, bool) {
	for left >= need && s.next < len(s.cands) {
		c := s.cands[s.next]
		s.next++
		m := s.models[c.Path]
		if m == nil {
			continue
		}
		fwd, inv, after, ok := blocks(m.lines, c.changes)
		if !ok {
			continue
		}
		// A candidate is never tried twice: the same file produced again
		// is the same hypothesis.
		k := c.Path + "\x00" + strings.Join(after, "\n")
		if s.applied[k] {
			continue
		}
		if why, ok := s.isRevert(c, after); ok {
			// Held back: tried once every other candidate has been.
			s.reverts = append(s.reverts, heldRevert{c, why})
			continue
		}
		s.applied[k] = true
		s.cur, s.curInv, s.curAfter, s.curRevert = c, inv, after, ""
		return s.actNow(intentApply, tools.Edit, s.hypothesis(c), tools.EditArgs{Path: c.Path, Blocks: fwd})
	}
	return harness.Action{}, false
}

// nextRevert applies a held-back revert once every other candidate has
// been tried: one that passes is not kept, but says that only a revert
// passes, so that no fix is offered.
func (s *state) nextRevert(left int) (harness.Action, bool) {
	// The reverts last: one that passes is not kept, but says that only a
	// revert passes, so that no fix is offered.
	for left >= 4 && s.next >= len(s.cands) && len(s.reverts) > 0 {
		r := s.reverts[0]
		s.reverts = s.reverts[1:]
		m := s.models[r.c.Path]
		fwd, inv, after, ok := blocks(m.lines, r.c.changes)
		k := r.c.Path + "\x00" + strings.Join(after, "\n")
		if !ok || s.applied[k] {
			continue
		}
		s.applied[k] = true
		s.cur, s.curInv, s.curAfter, s.curRevert = r.c, inv, after, r.why
		return s.actNow(intentApply, tools.Edit, s.hypothesis(r.c)+" This would be a revert ("+r.why+"): I try it only to learn whether a revert is all that passes, and undo it either way.",
			tools.EditArgs{Path: r.c.Path, Blocks: fwd})
	}
	return harness.Action{}, false
}

// actNow and exitNow are act and exit for a step that has decided.
func (s *state) actNow(in intent, name, thought string, args any) (harness.Action, bool) {
	return s.act(in, name, thought, args), true
}

func (s *state) exitNow(summary string) (harness.Action, bool) {
	return s.exit(summary), true
}

func (s *state) act(in intent, name, thought string, args any) harness.Action {
	s.intent = in
	return harness.NewAction(name, thought, args)
}

func (s *state) exit(summary string) harness.Action {
	s.done = true
	return s.act(intentNone, tools.Exit, "Done: "+firstLine(summary), tools.ExitArgs{Summary: summary})
}

// restore writes the file back as it was before the current candidate.
func (s *state) restore() (harness.Action, bool) {
	c := s.cur
	m := s.models[c.Path]
	orig := s.pristine[c.Path]
	ch, ok := diffLines(m.lines, orig)
	if !ok || !m.complete() {
		return harness.Action{}, false
	}
	search, replace, ok := makeBlock(m.lines, ch)
	if !ok {
		return harness.Action{}, false
	}
	s.curAfter = orig
	return s.act(intentRestore, tools.Edit, fmt.Sprintf(
		"%s is not as it was before my last candidate. Put the original lines back.", c.Path),
		tools.EditArgs{Path: c.Path, Blocks: Block(search, replace)}), true
}

func (s *state) hypothesis(c *Candidate) string {
	n := len(s.tried) + 1
	why := strings.Join(c.Why, "; ")
	if why == "" {
		why = "it is near the failure"
	}
	if c.Old != "" {
		return fmt.Sprintf("Hypothesis %d: %s line %d `%s` is wrong — %s (%s). Suspicious because %s.",
			n, c.Path, c.Line, strings.TrimSpace(c.Old), c.What, c.Template, why)
	}
	return fmt.Sprintf("Hypothesis %d: in %s, %s. Suspicious because %s.", n, c.Path, c.What, why)
}

// build ranks the candidates from what the policy has read, once, and
// keeps the files as they are before any edit.
func (s *state) build() {
	s.built = true
	var frames []location
	for _, fr := range s.frameRefs() {
		if p, ok := s.resolve(fr.path); ok && s.p.langs.isSource(p) {
			frames = append(frames, location{p, fr.line})
		}
	}
	s.cands = rank(evidence{models: s.models, diffs: s.diffs, frames: frames, called: s.called,
		spectrum: s.spectrum(), named: s.messageNames(), got: s.gotValues()})
	for p, m := range s.models {
		s.pristine[p] = append([]string(nil), m.lines...)
	}
	s.p.log.Debug("candidates", zap.String("task", s.task.ID), zap.Int("count", len(s.cands)))
}
