package node

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

func TestRunVitest(t *testing.T) {
	ctx, d, dir := fixture(t, nodetest.Price...)
	o, err := d.Run(ctx, dir, []string{nodetest.PriceTest, nodetest.PricePassing}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Failed) != 1 || o.Failed[0].ID() != nodetest.PriceTest {
		t.Fatalf("failed = %+v (%s)\n%s", o.Failed, o.Summary(), o.Output)
	}
	f := o.Failed[0]
	if f.Message != nodetest.PriceFailure {
		t.Errorf("message = %q, want %q", f.Message, nodetest.PriceFailure)
	}
	if len(f.Frames) == 0 || f.Frames[0] != nodetest.PriceFrame {
		t.Errorf("frames = %v, want %s first", f.Frames, nodetest.PriceFrame)
	}
	if strings.Contains(f.Output, dir) {
		t.Errorf("the checkout's path leaks into the failure:\n%s", f.Output)
	}
	if !slices.Equal(o.Passed, []string{nodetest.PricePassing}) {
		t.Errorf("passed = %v", o.Passed)
	}
	if r := o.Runs[nodetest.PriceTest]; r.Fail != 2 || r.Pass != 0 {
		t.Errorf("runs of the failing test = %+v, want 2 failures", r)
	}
	if o.Invocations != 2 || len(o.Others) != 0 || len(o.Missing) != 0 || len(o.Build) != 0 {
		t.Errorf("invocations %d, others %v, missing %v, build %v", o.Invocations, o.Others, o.Missing, o.Build)
	}
	// The passing test alone, by vitest's JUnit spelling: its failing
	// sibling does not run.
	o, err = d.Run(ctx, dir, []string{"src/price.test.ts.price > applies the discount"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Passed, []string{nodetest.PricePassing}) || len(o.Failed)+len(o.Others) != 0 {
		t.Errorf("the passing test alone: passed %v, failed %v, others %v (%s)", o.Passed, o.Failed, o.Others, o.Summary())
	}
	clean(t, dir)
}

func TestRunJest(t *testing.T) {
	ctx, d, dir := fixture(t, nodetest.Cart...)
	o, err := d.Run(ctx, dir, []string{nodetest.CartTest, "src/cart.test.js::cart > no such test"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Failed) != 1 || o.Failed[0].ID() != nodetest.CartTest {
		t.Fatalf("failed = %+v (%s)\n%s", o.Failed, o.Summary(), o.Output)
	}
	f := o.Failed[0]
	if f.Message != nodetest.CartFailure {
		t.Errorf("message = %q, want %q", f.Message, nodetest.CartFailure)
	}
	if len(f.Frames) == 0 || f.Frames[0] != nodetest.CartFrame {
		t.Errorf("frames = %v, want %s first", f.Frames, nodetest.CartFrame)
	}
	if !slices.Equal(o.Missing, []string{"src/cart.test.js::cart > no such test"}) {
		t.Errorf("missing = %v", o.Missing)
	}
	if len(o.Passed) != 0 {
		t.Errorf("passed = %v, want only the asked tests", o.Passed)
	}
	clean(t, dir)
}

// mocha and node:test: one test of a nested describe block picked by its
// full name, its sibling left alone; a failing assertion's message and
// frame; a whole file run.
func TestRunMochaAndNodeTest(t *testing.T) {
	for _, c := range []struct {
		name, test, sibling string
		history             []string
		breaking            string
		message, frame      string
	}{
		{
			"mocha", nodetest.WordsTest, "test/words.test.js::words > count > counts nothing in blanks", nodetest.Words,
			"words: count splits on commas too\n\n-- lib/words.js --\nfunction count(text) {\n  return text.split(/[\\s,]+/).length;\n}\n\nmodule.exports = { count };\n",
			"Expected values to be strictly equal: 2 !== 0", "test/words.test.js:11",
		},
		{
			"node:test", nodetest.TallyTest, "test/tally.test.js::tally > counts nothing", nodetest.Tally,
			"tally: an empty tally is null\n\n-- tally.js --\nfunction tally(items) {\n  if (items.length === 0) {\n    return null;\n  }\n  const out = {};\n  for (const item of items) {\n    out[item] = (out[item] || 0) + 1;\n  }\n  return out;\n}\n\nmodule.exports = { tally };\n",
			"Expected values to be strictly deep-equal:", "test/tally.test.js:11",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, d, dir := fixture(t, append(append([]string(nil), c.history...), c.breaking)...)
			o, err := d.Run(ctx, dir, []string{c.test, c.sibling}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.Passed, []string{c.test}) || len(o.Failed) != 1 || o.Failed[0].ID() != c.sibling {
				t.Fatalf("passed %v, failed %+v (%s)\n%s", o.Passed, o.Failed, o.Summary(), o.Output)
			}
			f := o.Failed[0]
			if !strings.HasPrefix(f.Message, c.message) {
				t.Errorf("message = %q, want it to start %q", f.Message, c.message)
			}
			if len(f.Frames) == 0 || f.Frames[0] != c.frame {
				t.Errorf("frames = %v, want %s first", f.Frames, c.frame)
			}
			o, err = d.Run(ctx, dir, []string{c.test}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.Passed, []string{c.test}) || len(o.Failed)+len(o.Others) != 0 {
				t.Errorf("the test alone: passed %v, failed %v, others %v", o.Passed, o.Failed, o.Others)
			}
			// A describe block: its tests.
			suite, _, _ := strings.Cut(c.test, " > ")
			o, err = d.Run(ctx, dir, []string{suite}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if r := o.Runs[suite]; r.Fail != 1 || len(o.Failed) != 1 || len(o.Passed) != 1 {
				t.Errorf("the describe block %s: runs %+v, %s", suite, r, o.Summary())
			}
			o, err = d.RunPackages(ctx, dir, []string{path.Dir(c.frame)})
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Passed) != 1 || len(o.Failed) != 1 {
				t.Errorf("the directory: %s", o.Summary())
			}
			clean(t, dir)
		})
	}
}
