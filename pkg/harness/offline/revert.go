package offline

import (
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/canon"
	"github.com/redfix/redfix/pkg/harness/offline/dialect"
	"github.com/redfix/redfix/pkg/task"
)

// Reverts: a candidate that throws away what the blame commit was for is
// not a fix, and the revert gate refuses it (reverting is a person's
// decision, offered as a revert pull request). The policy holds each
// candidate up against the blame commit the way the gate does: one that
// removes a function the commit added, or that undoes every change the
// commit made to the code, is a revert. Reverts are tried last, and only
// to say whether a revert is all that passes; their edit is undone either
// way.

// declaredFunc is the name of the function or class the line declares in
// the language d (nil: none), "" for none.
func declaredFunc(d *dialect.Dialect, line string) string {
	if d == nil || d.Declares == nil {
		return ""
	}
	if m := d.Declares.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// isRevert reports whether the candidate, whose file reads after once it
// is made, is a revert of the blame commit, and says why.
func (s *state) isRevert(c *Candidate, after []string) (string, bool) {
	m := s.models[c.Path]
	if m == nil || len(s.diffs) == 0 {
		return "", false
	}
	before := s.pristine[c.Path]
	if before == nil {
		before = m.lines
	}
	// A function the blame commit added that the candidate takes out.
	has := func(lines []string, name string) bool {
		for _, l := range lines {
			if declaredFunc(m.d, l) == name {
				return true
			}
		}
		return false
	}
	var code []string // the blame's source files with changes that matter
	for _, d := range s.diffs {
		if !s.p.langs.isSource(d.NewPath) {
			continue
		}
		meaningful := false
		for _, h := range d.Hunks {
			for _, l := range h.Lines {
				if l.Kind == ' ' || trivialLine(l.Text) {
					continue
				}
				meaningful = true
				if n := declaredFunc(m.d, l.Text); n != "" && l.Kind == '+' && d.NewPath == c.Path && has(before, n) && !has(after, n) {
					return fmt.Sprintf("it removes %s, which the blame commit added", n), true
				}
			}
		}
		if meaningful {
			code = append(code, d.NewPath)
		}
	}
	// Every change the blame commit made to the code, undone: only when
	// all of them are in the candidate's file.
	if len(code) == 0 {
		return "", false
	}
	for _, p := range code {
		if p != c.Path {
			return "", false
		}
	}
	var ch []change
	for _, d := range s.diffs {
		if d.NewPath != c.Path {
			continue
		}
		for _, h := range d.Hunks {
			loc, ok := locateHunk(m, h)
			if !ok {
				return "", false
			}
			ch = append(ch, change{start: loc.start, end: loc.end, repl: loc.old})
		}
	}
	for i := 1; i < len(ch); i++ {
		if ch[i].start <= ch[i-1].end {
			return "", false
		}
	}
	undone := applyChanges(before, ch)
	if !sameCode(after, undone) {
		return "", false
	}
	return fmt.Sprintf("it undoes every change %s made to the code", s.blameName()), true
}

// trivialLine is a line with nothing to say: blank, a comment, braces.
func trivialLine(l string) bool {
	t := strings.TrimSpace(l)
	if strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") {
		return true
	}
	return strings.Trim(t, "{}()[];,") == ""
}

// sameCode compares two versions of a file line by line, leaving out what
// carries no meaning (blank and comment lines, braces, spacing), each line
// in its canonical form (pkg/canon), as the revert gate compares them: a
// comparison with a constant put back in other words (`> 99999` for the
// blame's `>= 100000` undone) is the same line.
func sameCode(a, b []string) bool {
	sig := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if !trivialLine(l) {
				out = append(out, canon.Line(l))
			}
		}
		return out
	}
	return equalLines(sig(a), sig(b))
}

func (s *state) blameName() string {
	b := s.task.Bisection
	if b.Blame == "" {
		return "the blame commit"
	}
	name := "commit " + task.Short(b.Blame)
	if b.Subject != "" {
		name += fmt.Sprintf(" (%q)", b.Subject)
	}
	return name
}

// revertSummary is the exit when only a revert passes: no patch is left,
// and the first line says why.
func (s *state) revertSummary() string {
	c := s.revertPassed
	what := c.What
	if c.Old != "" {
		what = fmt.Sprintf("line %d `%s` → `%s`", c.Line, strings.TrimSpace(c.Old), strings.TrimSpace(c.New))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "No fix found: only a revert passes. The failing tests pass with %s: %s, but %s, so it is a revert of the blame commit, not a fix; I undid it. Reverting is for a revert pull request to offer and a person to decide.",
		c.Path, what, s.revertWhy)
	fmt.Fprintf(&b, " Failure: %s.", s.failureLine())
	if n := len(s.tried) - 1; n > 0 {
		fmt.Fprintf(&b, " %d other candidate(s) did not pass and were undone.", n)
	}
	return b.String()
}
