package canon

import "testing"

// Two spellings of one comparison have one form; what only looks alike
// keeps its own.
func TestLineSeesThroughRewordedComparisons(t *testing.T) {
	same := [][]string{
		{"if total >= 100000 {", "if total > 99999 {", "if total>=100_000{", "if total >= 0x186a0 {"},
		{"return n < 10", "return n <= 9"},
		{"if 5 < x {", "if 6 <= x {"},
		{"ok = 10 > x", "ok = 9 >= x"},
		{"if x > -1:", "if x >= 0:"},
		{"while 0 < i < 10:", "while 1 <= i <= 9:"},
		{"if (a > 3 && b < 7) {", "if (a >= 4 && b <= 6) {"},
		{"x if n > 2 else y", "x if n >= 3 else y"},
	}
	for _, group := range same {
		want := Line(group[0])
		for _, s := range group[1:] {
			if got := Line(s); got != want {
				t.Errorf("%q reads %q, %q reads %q: want one form", group[0], want, s, got)
			}
		}
	}
	differ := [][2]string{
		{"if total > 99999 * rate {", "if total >= 100000 * rate {"}, // not a whole operand
		{"if total > 1.5 {", "if total >= 2.5 {"},                    // not an integer
		{"ch <- 1", "ch <= -0"},                                      // a channel's arrow
		{"x := a >> 3", "x := a >>= 4"},
		{"f := (x) => 5", "f := (x) =>= 6"},
		{"p->n > 2", "p->n >= 2"},
		{"if a - 5 < x {", "if a - 6 <= x {"}, // 5 is not the whole left operand
		{"if total >= 100000 {", "if total > 100000 {"},
		{`s := "x > 9"`, `s := "x >= 10"`},
	}
	for _, d := range differ {
		if Line(d[0]) == Line(d[1]) {
			t.Errorf("%q and %q read the same (%q)", d[0], d[1], Line(d[0]))
		}
	}
}
