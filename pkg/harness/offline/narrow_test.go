package offline

import (
	"strings"
	"testing"
)

// hexFile has a range helper two functions share; isHexLetter's bound is
// one short.
const hexFile = `package hex

// inRange reports whether lo <= c < hi.
func inRange(c, lo, hi int) bool {
	return lo <= c && c < hi
}

// isDigit reports whether c is a decimal digit.
func isDigit(c int) bool {
	return inRange(c, 48, 58)
}

// isHexLetter reports whether c is a letter of a hexadecimal digit.
func isHexLetter(c int) bool {
	return inRange(c, 97, 102)
}
`

// TestRankPrefersTheCaller: the failing test runs the helper and the
// caller alike; the helper's boundary flip (a higher prior) passes the test
// too but changes every caller, so the caller's constant comes first. A
// helper with one caller is not held back.
func TestRankPrefersTheCaller(t *testing.T) {
	for _, shared := range []bool{true, false} {
		src := hexFile
		if !shared {
			src = strings.Replace(src, "return inRange(c, 48, 58)", "return 48 <= c && c < 58", 1)
		}
		ev := evidence{models: map[string]*fileModel{"hex/hex.go": modelOf("hex/hex.go", src)},
			spectrum: map[location]float64{{"hex/hex.go", 5}: 1, {"hex/hex.go", 15}: 1}}
		cands := rank(ev)
		helper, caller := -1, -1
		for i, c := range cands {
			if helper < 0 && c.Line == 5 && c.New == "\treturn lo <= c && c <= hi" {
				helper = i
			}
			if caller < 0 && c.Line == 15 && c.New == "\treturn inRange(c, 97, 103)" {
				caller = i
			}
		}
		if helper < 0 || caller < 0 {
			t.Fatalf("shared=%v: helper's widening at %d, caller's fix at %d", shared, helper, caller)
		}
		if shared && (caller > helper || !strings.Contains(strings.Join(cands[helper].Why, "; "), "shared by 2 callers (isDigit, isHexLetter)")) {
			t.Errorf("the shared helper's widening (%d, %v) comes before the caller's fix (%d)", helper, cands[helper].Why, caller)
		}
		if !shared && helper > caller {
			t.Errorf("a helper with one caller is held back: widening at %d, the caller's fix at %d", helper, caller)
		}
	}
}
