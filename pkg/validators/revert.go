package validators

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// revert rejects a patch that mostly undoes the blame commit: reverting is a
// person's decision, not a fix. A patch is a revert when both
//
//   - share: of the patch's changed lines, at least RevertThreshold are the
//     exact inverse of the blame commit's (a line the patch adds that the blame
//     removed from the same file, or one it removes that the blame added),
//   - coverage: those lines undo more than RevertCoverage of the blame's
//     changed lines outside tests.
//
// Lines are compared without indentation; lines with no letter or digit
// ("}", blank) count on neither side. Undoing one hunk of a larger commit
// has a low coverage and passes: that is how many real fixes look.
func (v *Validators) revert(_ context.Context, c *candidate) (task.Gate, error) {
	if strings.TrimSpace(c.in.BlameDiff) == "" {
		return pass("no blame diff to compare with: the patch cannot be a revert of it"), nil
	}
	if c.parseErr != nil {
		return fail(fmt.Sprintf("the patch cannot be read as a unified diff: %v", c.parseErr)), nil
	}
	blame, err := unidiff.Parse(c.in.BlameDiff)
	if err != nil {
		return pass(fmt.Sprintf("the blame diff cannot be read (%v): nothing to compare with", err)), nil
	}
	m := measureRevert(c.files, blame, c.isTestFile)
	name := blameName(c.in.Task)
	rule := fmt.Sprintf("a revert is at least %.0f%% of the patch's changed lines undoing more than %.0f%% of the blame's changed non-test lines; lines compared without indentation, brace-only and blank lines ignored",
		100*v.cfg.RevertThreshold, 100*RevertCoverage)
	measure := fmt.Sprintf("%d of the patch's %d changed lines are the exact inverse of lines of the blame commit (%.0f%%), undoing %d of its %d changed non-test lines (%.0f%%)",
		m.matched, m.patchLines, 100*m.share(), m.matchedBlame, m.blameLines, 100*m.coverage())
	if m.patchLines > 0 && m.share() >= v.cfg.RevertThreshold && m.coverage() > RevertCoverage {
		return fail(fmt.Sprintf("patch reverts %.0f%% of %s: %s.\n%s.", 100*m.coverage(), name, measure, rule)), nil
	}
	return pass(fmt.Sprintf("not a revert of %s: %s.\n%s.", name, measure, rule)), nil
}

type revertMeasure struct {
	matched      int // patch lines that invert a blame line
	patchLines   int
	matchedBlame int // of them, those inverting a non-test line of the blame
	blameLines   int // the blame's changed non-test lines
}

func (m revertMeasure) share() float64 {
	if m.patchLines == 0 {
		return 0
	}
	return float64(m.matched) / float64(m.patchLines)
}

func (m revertMeasure) coverage() float64 {
	if m.blameLines == 0 {
		return 0
	}
	return float64(m.matchedBlame) / float64(m.blameLines)
}

// measureRevert pairs the patch's lines with the inverse lines of the blame,
// each blame line used at most once.
func measureRevert(patch, blame []unidiff.File, isTest func(string) bool) revertMeasure {
	type key struct {
		file  string
		added bool // the blame added the line
		text  string
	}
	avail := map[key]int{}
	var m revertMeasure
	for _, f := range blame {
		for _, l := range f.Changes() {
			t := norm(l.Text)
			if trivial(t) {
				continue
			}
			file := f.OldPath
			if l.Added() {
				file = f.NewPath
			}
			avail[key{file, l.Added(), t}]++
			if !isTest(f.Path()) {
				m.blameLines++
			}
		}
	}
	for _, f := range patch {
		for _, l := range f.Changes() {
			t := norm(l.Text)
			if trivial(t) {
				continue
			}
			m.patchLines++
			// The inverse: a line the patch removes was added by the blame
			// (in the file as it is now), a line it adds was removed by it.
			k := key{f.OldPath, true, t}
			if l.Added() {
				k = key{f.NewPath, false, t}
			}
			if avail[k] > 0 {
				avail[k]--
				m.matched++
				if !isTest(f.Path()) {
					m.matchedBlame++
				}
			}
		}
	}
	return m
}

// trivial lines carry no meaning of their own.
func trivial(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

func blameName(t task.Task) string {
	b := t.Bisection
	if b.Blame == "" {
		return "the blame commit"
	}
	name := task.Short(b.Blame)
	if b.Subject != "" {
		name += fmt.Sprintf(" (%q)", b.Subject)
	}
	return name
}
