package offline

import (
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/task"
)

// Summaries: what the policy says when it exits, for the pull request and
// for people.

// shortNames are the test ids without their packages, n at most.
func shortNames(ids []string, n int) []string {
	var out []string
	for i, id := range ids {
		if i == n {
			out = append(out, "…")
			break
		}
		if j := strings.LastIndex(id, ".Test"); j >= 0 {
			id = id[j+1:]
		}
		out = append(out, id)
	}
	return out
}

func (s *state) failureLine() string {
	if len(s.failures) == 0 {
		return "the failing tests"
	}
	f := s.failures[0]
	msg := f.Test
	if f.Message != "" {
		msg += " (" + firstLine(f.Message) + ")"
	}
	if n := len(s.failures); n > 1 {
		msg += fmt.Sprintf(" and %d more", n-1)
	}
	return msg
}

func (s *state) fixedSummary() string {
	c := s.cur
	var b strings.Builder
	if c.Old != "" {
		fmt.Fprintf(&b, "Changed %s line %d from `%s` to `%s` (%s: %s).", c.Path, c.Line, strings.TrimSpace(c.Old), strings.TrimSpace(c.New), c.Template, c.What)
	} else {
		fmt.Fprintf(&b, "In %s: %s (%s).", c.Path, c.What, c.Template)
	}
	if len(c.Why) > 0 {
		fmt.Fprintf(&b, " Why this place: %s.", strings.Join(c.Why, "; "))
	}
	if s.task.Bisection.Blame != "" {
		fmt.Fprintf(&b, " Blame commit: %s", task.Short(s.task.Bisection.Blame))
		if s.task.Bisection.Subject != "" {
			fmt.Fprintf(&b, " %q", s.task.Bisection.Subject)
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, " Before: %s failed; now the failing tests pass", s.failureLine())
	if s.regressed {
		fmt.Fprintf(&b, ", and so do the %d other test(s) next to them", len(s.otherTests()))
	}
	b.WriteString(".")
	if n := len(s.tried); n > 0 {
		fmt.Fprintf(&b, " %d earlier candidate(s) did not pass and were undone.", n)
	}
	b.WriteString(" Found by the offline repair templates, without a model: review whether the change is the intended behavior.")
	return b.String()
}

func (s *state) summary(head string) string {
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, " Failure: %s.", s.failureLine())
	if len(s.tried) == 0 {
		b.WriteString(" I found no suspicious line to which a repair template applies.")
	} else {
		fmt.Fprintf(&b, " I tried %d candidate edit(s), each undone after it failed:", len(s.tried))
		for i, t := range s.tried {
			if i == 8 {
				fmt.Fprintf(&b, "\n- … and %d more", len(s.tried)-8)
				break
			}
			fmt.Fprintf(&b, "\n- %s: %s", t.c.Describe(), t.outcome)
		}
		b.WriteString("\nThe bug is probably not a one-token mistake or a revertible hunk; it needs a model or a person.")
	}
	return b.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
