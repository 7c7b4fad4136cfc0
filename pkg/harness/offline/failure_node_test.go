package offline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness/tools"
	"github.com/redfix/redfix/pkg/task"
)

func TestIsSourceJS(t *testing.T) {
	for p, want := range map[string]bool{
		"src/price.ts":              true,
		"src/price.test.ts":         false,
		"src/price.spec.mjs":        false,
		"src/__tests__/price.js":    false,
		"test/helpers.cjs":          false,
		"lib/cart.jsx":              true,
		"src/view.tsx":              true,
		"src/types.d.ts":            false,
		"node_modules/x/index.js":   false,
		"src/index.mts":             true,
		"src/data/prices.json":      false,
		"src/testing/mocks/util.js": true,
	} {
		if got := testLangs.isSource(p); got != want {
			t.Errorf("isSource(%q) = %v", p, got)
		}
	}
}

// A vitest failure as the driver reports it: its stack names the
// functions (V8's frames in the output; vitest's own form too) and the
// places; its message what it got.
func TestJSFailureReading(t *testing.T) {
	out := `AssertionError: expected 10000 to be 9500 // Object.is equality
    at Catalog.discount (/tmp/w/src/pricing.ts:27:13)
    at quote (file:///tmp/w/src/pricing.ts:38:40)
    at Object.<anonymous> (/tmp/w/src/pricing.test.ts:19:29)
    at runTest (/tmp/w/node_modules/@vitest/runner/dist/index.js:781:11)
    at node:internal/process/task_queues:95:5
 ❯ helper src/util.mts:4:2`
	d := testLangs.of("src/pricing.test.ts")
	names, _ := d.Stack(out)
	locs := stackLocations(d, out)
	if want := []string{"discount", "quote", "helper"}; !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	want := []location{{"/tmp/w/src/pricing.ts", 27}, {"/tmp/w/src/pricing.ts", 38}, {"/tmp/w/src/pricing.test.ts", 19}, {"src/util.mts", 4}}
	if !slices.Equal(locs, want) {
		t.Errorf("locations = %v, want %v", locs, want)
	}
	for msg, want := range map[string][]string{
		"AssertionError: expected 10000 to be 9500 // Object.is equality":    {"10000"},
		"expected 'a' to deeply equal 'b'":                                   {`"a"`},
		"expect(received).toBe(expected)\n\nExpected: 9500\nReceived: 10000": {"10000"},
		"10000 !== 9500":  {"10000"},
		"unrelated words": nil,
	} {
		if got := d.Got(msg); !slices.Equal(got, want) {
			t.Errorf("jsGot(%q) = %q, want %q", msg, got, want)
		}
	}
	for fr, want := range map[string]location{
		"src/pricing.ts:27":                {"src/pricing.ts", 27},
		"src/pricing.ts:27:13":             {"src/pricing.ts", 27},
		"file:///tmp/w/src/pricing.ts:3:1": {"/tmp/w/src/pricing.ts", 3},
		"shop/pricing.py:33":               {"shop/pricing.py", 33},
	} {
		if got, ok := parseFrame(fr); !ok || got != want {
			t.Errorf("parseFrame(%q) = %v %v, want %v", fr, got, ok, want)
		}
	}
	if got := d.Title("pricing > tiers > applies a tier"); got != "applies a tier" {
		t.Errorf("jsTitle = %q", got)
	}
	// A failure without frames is read from its stack: the frames, and
	// the functions it names scored as named.
	s := observeOne(t, tools.GetTaskDetails, nil, tools.Observation{})
	s.failures = []task.Failure{{Package: "src/pricing.test.ts", Test: "pricing > applies a tier", Message: "expected 10000 to be 9500", Output: out}}
	if got := s.frameRefs(); len(got) != 4 || got[0] != (location{"/tmp/w/src/pricing.ts", 27}) {
		t.Errorf("frameRefs = %v", got)
	}
	if n := s.messageNames(); !n["discount"] || !n["quote"] {
		t.Errorf("messageNames = %v", n)
	}
	if got := s.gotValues(); !slices.Equal(got, []string{"10000"}) {
		t.Errorf("gotValues = %q", got)
	}
}

// jsScenario is the repository of testdata/node/NAME.txtar made in a new
// directory, one commit a stage, and the blame commit's (1) diff.
func jsScenario(t *testing.T, name string) (dir, diff string, head map[string]string) {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "node", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir = t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	head = map[string]string{}
	stage := "0"
	commit := func() {
		if _, err := repo.CommitAll(ctx, "stage "+stage); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range ar.Files {
		st, rel, _ := strings.Cut(f.Name, "/")
		if st != stage {
			commit()
			stage = st
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		head[rel] = string(f.Data)
	}
	commit()
	c, err := repo.Show(ctx, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	return dir, c.Diff, head
}

// A single-point bug in a TypeScript file, inside a commit that does more:
// localized by the blame commit's hunks, the test's calls and the file's
// functions, the comparison's fix is among the first candidates, and no
// candidate touches the test, a comment, a string or a type.
func TestRankTypeScriptBlame(t *testing.T) {
	_, diff, head := jsScenario(t, "01-ts-boundary")
	src := modelOf("src/pricing.ts", head["src/pricing.ts"])
	test := modelOf("src/pricing.test.ts", head["src/pricing.test.ts"])
	s := observeOne(t, tools.GetTaskDetails, nil, tools.Observation{})
	s.models = map[string]*fileModel{"src/pricing.ts": src, "src/pricing.test.ts": test}
	s.failures = []task.Failure{{Package: "src/pricing.test.ts", Test: "pricing > applies a tier from its minimum", Message: "expected 10000 to be 9500"}}
	d := testLangs.of("src/pricing.test.ts")
	n, ok := d.TestLine(modelLines{test}, "applies a tier from its minimum")
	if !ok || n != 18 {
		t.Fatalf("test line = %d %v", n, ok)
	}
	s.collectTestCalls(d, test, n)
	if !s.called["quote"] || s.called["expect"] || s.called["toBe"] || s.called["setPrice"] {
		t.Errorf("called = %v", s.called)
	}
	cands := rank(evidence{models: s.models, diffs: parseDiff(t, diff), called: s.called, named: s.messageNames(), got: s.gotValues()})
	fix := -1
	for i, c := range cands {
		t.Logf("%2d %5.1f %s (%s) %v", i, c.Score, c.Describe(), c.Template, c.Why)
		if c.Path != "src/pricing.ts" {
			t.Errorf("candidate outside the code: %s", c.Describe())
		}
		if c.New == "      if (qty >= t.minQty) {" && fix < 0 {
			fix = i
		}
		for _, bad := range []string{"Map<=", "Map>", "${tier.percentOff}%", "/**"} {
			if strings.Contains(c.New, bad) && !strings.Contains(c.Old, bad) {
				t.Errorf("candidate changes what is not code: %s", c.Describe())
			}
		}
	}
	if fix < 0 || fix > 3 {
		t.Fatalf("the boundary's fix is candidate %d", fix)
	}
	if why := strings.Join(cands[fix].Why, "; "); !strings.Contains(why, "in discount, which the blame commit changed") {
		t.Errorf("the fix's evidence: %s", why)
	}
}

// Without a blame commit, a JavaScript failure's stack leads: the line its
// innermost frame in the code names, and the function it names, come
// first.
func TestRankJavaScriptFromStack(t *testing.T) {
	src := `const { withTax } = require("./tax");

function lineTotal(item) {
  return item.price * item.qty - item.discount;
}

function cartTotal(items, rate = 0) {
  let sum = 0;
  for (const item of items) {
    sum += lineTotal(item);
  }
  return withTax(sum, rate);
}

module.exports = { lineTotal, cartTotal };
`
	s := observeOne(t, tools.GetTaskDetails, nil, tools.Observation{})
	s.models = map[string]*fileModel{"src/cart.js": modelOf("src/cart.js", src)}
	s.failures = []task.Failure{{Package: "src/cart.test.js", Test: "cart > totals the items",
		Message: "expect(received).toBe(expected) // Object.is equality; Expected: 10; Received: 4",
		Output:  "Error: expect(received).toBe(expected)\n    at lineTotal (/tmp/w/src/cart.js:4:35)\n    at cartTotal (/tmp/w/src/cart.js:10:12)\n    at Object.<anonymous> (/tmp/w/src/cart.test.js:9:23)"}}
	s.build()
	if len(s.cands) == 0 {
		t.Fatal("no candidates")
	}
	c := s.cands[0]
	if c.Line != 4 || !strings.Contains(strings.Join(c.Why, "; "), "the failure's stack trace points here") {
		t.Errorf("first candidate = %s %v", c.Describe(), c.Why)
	}
	for _, c := range s.cands {
		if c.Line == 1 || c.Line == 15 {
			t.Errorf("a candidate outside the functions the stack names: %s", c.Describe())
		}
	}
}
