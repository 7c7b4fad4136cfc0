package judge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/task"
)

const priceTest = `import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Catalog } from "./pricing";

let catalog: Catalog;

beforeAll(() => {
  process.env.TZ = "UTC";
});

describe("pricing", () => {
  beforeEach(() => {
    catalog = new Catalog();
    catalog.addTier({ minQty: 10, percentOff: 5 });
  });

  it("charges full price below the first tier", () => {
    expect(catalog.quote("widget", 9)).toBe(9000);
  });
  it("applies a tier from its minimum", () => {
    const want = 9500; // "}" in a comment, and in a string: "})"
    expect(catalog.quote("widget", 10)).toBe(want);
  });

  describe("tiers", () => {
    beforeEach(() => catalog.addTier({ minQty: 50, percentOff: 12 }));

    test('picks the best', async () => {
      expect(catalog.quote("widget", 60)).toBe(52800);
    });
  });
});

describe("other", () => {
  beforeEach(() => {
    catalog = new Catalog();
  });

  it("applies a tier from its minimum", () => {
    expect(1).toBe(1);
  });
});
`

const pricingSrc = `export class Catalog {
  private tiers: { minQty: number; percentOff: number }[] = [];

  addTier(t: { minQty: number; percentOff: number }): void {
    this.tiers.push(t);
  }

  discount(qty: number): number {
    let best = 0;
    for (const t of this.tiers) {
      if (qty >= t.minQty && t.percentOff > best) {
        best = t.percentOff;
      }
    }
    return best;
  }

  quote(sku: string, qty: number): number {
    return qty * 1000 - (qty * 1000 * this.discount(qty)) / 100;
  }
}

export const round = (n: number) => Math.round(n);
`

// The judge's context for TypeScript: the failing test's own call (not its
// neighbour's, nor the same title in another describe), the hooks of its
// describe blocks and of its file, and the changed method before and after
// as the Node driver's parser delimits it.
func TestWithContextInTypeScript(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"package.json":        `{"name":"shop","devDependencies":{"vitest":"4.1.12"}}`,
		"src/pricing.ts":      pricingSrc,
		"src/pricing.test.ts": priceTest,
	})
	patch := "--- a/src/pricing.ts\n+++ b/src/pricing.ts\n@@ -10,3 +10,3 @@ export class Catalog {\n     for (const t of this.tiers) {\n-      if (qty > t.minQty && t.percentOff > best) {\n+      if (qty >= t.minQty && t.percentOff > best) {\n         best = t.percentOff;\n"
	in := judge.WithContext(dir, node.Driver{}, judge.Input{
		Task: task.Task{Failures: []task.Failure{
			{Package: "src/pricing.test.ts", Test: "pricing > applies a tier from its minimum"},
			{Package: "src/pricing.test.ts", Test: "pricing > tiers > picks the best"},
		}},
		Patch: patch,
	})
	if len(in.Tests) != 2 {
		t.Fatalf("tests = %+v", in.Tests)
	}
	first := in.Tests[0]
	want := `  it("applies a tier from its minimum", () => {
    const want = 9500; // "}" in a comment, and in a string: "})"
    expect(catalog.quote("widget", 10)).toBe(want);
  });

beforeAll(() => {
  process.env.TZ = "UTC";
});

  beforeEach(() => {
    catalog = new Catalog();
    catalog.addTier({ minQty: 10, percentOff: 5 });
  });`
	if first.Name != "pricing > applies a tier from its minimum (src/pricing.test.ts:19)" || first.Text != want {
		t.Errorf("test source = %s\n%s", first.Name, first.Text)
	}
	second := in.Tests[1]
	if second.Name != "pricing > tiers > picks the best (src/pricing.test.ts:27)" ||
		!strings.HasPrefix(second.Text, "    test('picks the best', async () => {\n      expect(catalog.quote(\"widget\", 60)).toBe(52800);\n    });\n\n") ||
		!strings.HasSuffix(second.Text, "    beforeEach(() => catalog.addTier({ minQty: 50, percentOff: 12 }));") ||
		strings.Contains(second.Text, "full price") || strings.Contains(second.Text, "expect(1)") {
		t.Errorf("nested test source = %s\n%s", second.Name, second.Text)
	}
	if len(in.Code) != 1 || in.Code[0].Where != "src/pricing.ts: method Catalog.discount" ||
		!strings.Contains(in.Code[0].Before, "if (qty > t.minQty") || !strings.Contains(in.Code[0].After, "if (qty >= t.minQty") ||
		strings.Contains(in.Code[0].After, "quote(") {
		t.Errorf("code = %+v", in.Code)
	}
}

// A JavaScript test longer than the room is cut at a line boundary with a
// marker; a title two describe blocks share is not guessed at (an id the
// driver cannot resolve is read as its canonical FILE::NAME); a test
// named by a template literal and one on a line it shares with another are
// quoted alone.
func TestWithContextInJavaScript(t *testing.T) {
	dir := t.TempDir()
	var long strings.Builder
	long.WriteString("describe(\"cart\", () => {\n  it(\"totals many items\", () => {\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&long, "    expect(total([%d, 1])).toBe(%d);\n", i, i+1)
	}
	long.WriteString("  });\n  it(`adds one`, () => { expect(total([1])).toBe(1); }); it(\"adds none\", () => expect(total([])).toBe(0));\n});\n\n")
	long.WriteString("describe(\"a\", () => { it(\"same\", () => {}); });\ndescribe(\"b\", () => { it(\"same\", () => {}); });\n")
	writeTree(t, dir, map[string]string{
		"package.json":     `{"name":"cart","devDependencies":{"jest":"30.5.2"}}`,
		"src/cart.js":      "export function total(xs) {\n  return xs.reduce((a, b) => a + b, 0);\n}\n",
		"src/cart.test.js": long.String(),
	})
	in := judge.WithContext(dir, node.Driver{}, judge.Input{Task: task.Task{Failures: []task.Failure{
		{Package: "src/cart.test.js", Test: "cart > totals many items"},
		{Package: "src/cart.test.js", Test: "cart > adds one"},
		{Package: "src/cart.test.js", Test: "cart > adds none"},
		{Package: "src/cart.test.js", Test: "c > same"},
	}}})
	if len(in.Tests) != 3 {
		t.Fatalf("tests = %d: %+v", len(in.Tests), in.Tests)
	}
	cut := in.Tests[0].Text
	lines := strings.Split(cut, "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(cut, "  it(\"totals many items\", () => {\n    expect(total([0, 1])).toBe(1);\n") ||
		!strings.HasPrefix(last, "[… ") || !strings.HasSuffix(last, " more lines not shown …]") || len(cut) > 6000 {
		t.Errorf("a long test is not cut at a line with a marker: %d bytes, ends %q", len(cut), last)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if !strings.HasPrefix(l, "    expect(total([") || !strings.HasSuffix(l, ");") {
			t.Errorf("a line cut or not the test's own: %q", l)
		}
	}
	if got := in.Tests[1]; got.Name != "cart > adds one (src/cart.test.js:404)" || got.Text != "  it(`adds one`, () => { expect(total([1])).toBe(1); });" {
		t.Errorf("adds one = %+v", got)
	}
	if got := in.Tests[2]; got.Text != `it("adds none", () => expect(total([])).toBe(0));` {
		t.Errorf("adds none = %+v", got)
	}
}

// A change outside any method of a class (a field) shows the lines around
// it in the class, with its head and end, not the class whole, which a
// long class would cut at the room the judge has before the change; and
// the class is named without a kind ("struct" is not JavaScript's word).
func TestWithContextShowsAClassAroundTheChange(t *testing.T) {
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("export class DateTime {\n  static DEFAULT_ZONE = \"UTC\";\n  constructor(ts) {\n    this.ts = ts;\n  }\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&src, "\n  get part%d() {\n    return this.ts + %d;\n  }\n", i, i)
	}
	src.WriteString("}\n")
	writeTree(t, dir, map[string]string{
		"package.json":         `{"name":"dt","devDependencies":{"vitest":"4.1.12"}}`,
		"src/datetime.ts":      src.String(),
		"src/datetime.test.ts": "import { DateTime } from './datetime';\nit('zone', () => {});\n",
	})
	field := "--- a/src/datetime.ts\n+++ b/src/datetime.ts\n@@ -1,3 +1,3 @@\n export class DateTime {\n-  static DEFAULT_ZONE = \"local\";\n+  static DEFAULT_ZONE = \"UTC\";\n   constructor(ts) {\n"
	in := judge.WithContext(dir, node.Driver{}, judge.Input{Task: task.Task{Failures: []task.Failure{{Package: "src/datetime.test.ts", Test: "zone"}}}, Patch: field})
	if len(in.Code) != 1 {
		t.Fatalf("code = %+v", in.Code)
	}
	c := in.Code[0]
	if c.Where != "src/datetime.ts: in DateTime" || strings.Contains(c.Where, "struct") {
		t.Errorf("where = %q", c.Where)
	}
	if !strings.Contains(c.Before, `DEFAULT_ZONE = "local"`) || !strings.Contains(c.After, `DEFAULT_ZONE = "UTC"`) ||
		!strings.HasPrefix(c.After, "export class DateTime {\n") || !strings.HasSuffix(c.After, "…\n}") ||
		strings.Contains(c.After, "part10") || len(c.Before) > 400 {
		t.Errorf("the class around the change:\nbefore %q\nafter %q", c.Before, c.After)
	}
}
