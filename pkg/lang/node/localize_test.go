package node

import (
	"fmt"
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/testrun"
)

// The line the breaking commit changed ranks first: the failing test runs
// it, the passing ones that run the same function do not reach it, or
// pass through it.
func TestLocalize(t *testing.T) {
	for _, c := range []struct {
		name    string
		history []string
		test    string
		want    string // the breaking line
	}{
		{"vitest", nodetest.Price, nodetest.PriceTest, "src/price.ts:9"},
		{"jest", nodetest.Cart, nodetest.CartTest, "src/cart.js:9"},
		{"mocha", append(append([]string(nil), nodetest.Words...), "words: count splits on commas too\n\n-- lib/words.js --\nfunction count(text) {\n  if (text.trim() === '') {\n    return text.split(',').length;\n  }\n  return text.split(/\\s+/).filter(Boolean).length;\n}\n\nmodule.exports = { count };\n"),
			"test/words.test.js::words > count > counts nothing in blanks", "lib/words.js:3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, d, dir := fixture(t, c.history...)
			sp, err := d.Localize(ctx, dir, []string{c.test}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sp.Failing, []string{c.test}) || len(sp.Passing) == 0 {
				t.Fatalf("failing %v, passing %v", sp.Failing, sp.Passing)
			}
			if len(sp.Suspects) == 0 {
				t.Fatal("no suspects")
			}
			top := sp.Suspects[0]
			var ranked []string
			for _, s := range sp.Suspects {
				ranked = append(ranked, s.File+":"+itoa(s.Line))
			}
			if !slices.Contains(ranked, c.want) || sp.Suspects[0].Score < suspectScore(sp.Suspects, c.want) {
				t.Errorf("suspects %v (top %+v), want %s among the first", ranked, top, c.want)
			}
			if first := rankOf(ranked, sp.Suspects, c.want); first != 1 {
				t.Errorf("%s ranks %d in %v", c.want, first, ranked)
			}
			clean(t, dir)
		})
	}
}

// rankOf is want's rank counting ties with it as ahead of it only when
// they score more (1-based).
func rankOf(ranked []string, sus []testrun.Suspect, want string) int {
	score := suspectScore(sus, want)
	r := 1
	for _, s := range sus {
		if s.Score > score {
			r++
		}
	}
	return r
}

func suspectScore(sus []testrun.Suspect, want string) float64 {
	for _, s := range sus {
		if s.File+":"+itoa(s.Line) == want {
			return s.Score
		}
	}
	return -1
}

func itoa(n int) string {
	return fmt.Sprint(n)
}
