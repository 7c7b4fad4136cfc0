package node

import (
	"slices"
	"strings"
	"testing"
)

// mocha's full title is split by the titles of the file's suites seen so
// far, the innermost last; a title that does not split stays whole.
func TestMochaNames(t *testing.T) {
	for _, c := range []struct {
		full, title string
		suites      []string
		want        []string
	}{
		{"a b c d", "d", []string{"a b", "c"}, []string{"a b", "c", "d"}},
		{"a b c d", "d", []string{"a", "b", "x", "c"}, []string{"a", "b", "c", "d"}},
		{"cart totals the items", "the items", []string{"cart totals"}, []string{"cart totals", "the items"}},
		{"cart totals the items", "the items", []string{"totals"}, nil},
		{"a b", "c", []string{"a"}, nil},
	} {
		if got := mochaNames(c.full, c.title, c.suites); !slices.Equal(got, c.want) {
			t.Errorf("mochaNames(%q, %q, %q) = %q, want %q", c.full, c.title, c.suites, got, c.want)
		}
	}
}

func TestJSFrames(t *testing.T) {
	out := strings.Join([]string{
		"TypeError: x is not a function",
		"    at total (/ci/app/src/cart.ts:10:5)",
		"    at /ci/app/src/cart.test.ts:4:7",
		"    at async Promise.all (index 0)",
		"    at TestContext.<anonymous> (file:///ci/app/test/a.test.mjs:3:9)",
		"    at Test.run (node:internal/test_runner/test:796:25)",
		"    at node:internal/process/task_queues:95:5",
		"    at run (/ci/app/node_modules/mocha/lib/runner.js:1:2)",
		"    at new Promise (<anonymous>)",
		" ❯ applyCoupon src/coupon.ts:12:11",
		" ❯ src/cart.test.ts:4:7",
	}, "\n")
	want := []string{"/ci/app/src/cart.ts:10", "/ci/app/src/cart.test.ts:4", "/ci/app/test/a.test.mjs:3", "src/coupon.ts:12", "src/cart.test.ts:4"}
	if got := jsFrames(out, 5); !slices.Equal(got, want) {
		t.Errorf("frames %q\nwant   %q", got, want)
	}
}
