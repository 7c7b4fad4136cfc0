package linebound

import (
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for _, c := range []struct {
		lines []string
		bad   bool
	}{
		{[]string{strings.Repeat("x", MaxBytes)}, false},
		{[]string{strings.Repeat("x", MaxBytes+1)}, true},
		{[]string{strings.Repeat("(", MaxNesting)}, false},
		{[]string{strings.Repeat("(", MaxNesting+1)}, true},
		// Nesting is carried from line to line.
		{[]string{strings.Repeat("{", MaxNesting/2+1), strings.Repeat("[", MaxNesting/2)}, true},
		// A closer with nothing open lends no credit.
		{[]string{strings.Repeat(")", 50) + strings.Repeat("(", MaxNesting)}, false},
		{[]string{strings.Repeat(")", 50) + strings.Repeat("(", MaxNesting+1)}, true},
		{[]string{"f(a[b{c}])", "g()"}, false},
	} {
		var d Depth
		bad := false
		for _, l := range c.lines {
			if d.Line(l) != "" {
				bad = true
			}
		}
		if bad != c.bad {
			t.Errorf("lines of %v bytes: out of bounds %v, want %v", len(strings.Join(c.lines, "")), bad, c.bad)
		}
	}
}
