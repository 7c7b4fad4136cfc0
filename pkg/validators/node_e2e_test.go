package validators

import (
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/task"
)

// The gates end to end on real JavaScript and TypeScript repositories, their
// tests run by vitest and jest through the node driver: nodetest's price
// (TypeScript, vitest) and cart (CommonJS, jest) histories, whose third
// commit breaks a test inside a larger change.

// priceIndex is a last commit on price: an index re-exporting the modules,
// and a test that reaches round only through it (the regression gate finds
// it by the import graph).
const priceIndex = `price: an index, and a checkout test through it

-- src/index.ts --
export { discount, total } from './price';
export { round } from './round';
-- test/checkout.test.ts --
import { describe, expect, it } from 'vitest';
import { round } from '../src';

describe('checkout', () => {
  it('rounds half up, negative amounts too', () => {
    expect(round(-0.125)).toBe(-0.12);
  });
});
`

// The price module as the blame commit left it, and its test.
const (
	priceBroken = `import { round } from './round';

export function discount(price: number, rate: number): number {
  return price - price * rate;
}

export function total(prices: number[], rate: number): number {
  let sum = 0;
  for (const p of prices.slice(1)) {
    sum += discount(p, rate);
  }
  return round(sum);
}
`
	priceTestFile = `import { describe, expect, it } from 'vitest';
import { discount, total } from './price';

describe('price', () => {
  it('applies the discount', () => {
    expect(discount(100, 0.1)).toBe(90);
  });

  it('totals the prices', () => {
    expect(total([100, 50], 0.1)).toBe(135);
  });
});
`
	cartBroken = `const { withTax } = require('./tax');

function lineTotal(item) {
  return item.price * item.qty;
}

function cartTotal(items, rate = 0) {
  let sum = 0;
  for (const item of items.slice(1)) {
    sum += lineTotal(item);
  }
  return withTax(sum, rate);
}

module.exports = { lineTotal, cartTotal };
`
	cartTestFile = `const { lineTotal, cartTotal } = require('./cart');

describe('cart', () => {
  test('prices a line', () => {
    expect(lineTotal({ price: 3, qty: 2 })).toBe(6);
  });

  test('totals the items', () => {
    expect(cartTotal([{ price: 3, qty: 2 }, { price: 1, qty: 4 }])).toBe(10);
  });
});
`
)

// nodeCase is a patch on a history's last commit and what the gates say.
type nodeCase struct {
	name       string
	allowTests bool
	change     map[string]string
	gate       string   // the gate that rejects it; "" for a patch every gate passes
	detail     []string // what that gate's detail says
}

// nodeOracleRuns is the oracle's runs in a row here: two show the runs
// repeated and counted through the driver; the default (three) is held by
// the Go tests (TestGoodPatchPassesEveryGate, TestBuildFailureTask).
const nodeOracleRuns = 2

// checkNode runs every gate on the change to the history's last commit,
// for the failing test, the blame being the history's broken commit.
func checkNode(t *testing.T, repoName string, history []string, broken int, test string, c nodeCase) map[string]task.Gate {
	t.Helper()
	ctx := nodetest.Confined(t, repoName)
	dir, commits := nodetest.History(t, history...)
	repo := gitrepo.Repo{Dir: dir}
	blame, err := repo.Show(ctx, commits[broken])
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, c.change)
	patch, err := repo.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := node.Driver{CacheDir: nodetest.CacheDir(t)}
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatal(err)
	}
	head := commits[len(commits)-1]
	file, name, _ := strings.Cut(test, "::")
	in := Input{
		Dir: dir, Base: head, Patch: patch, Lang: d, BlameDiff: blame.Diff,
		Task: task.Task{
			ID: "t1", Commit: head, Failures: []task.Failure{{Package: file, Test: name}},
			Bisection: task.Bisection{Blame: commits[broken], Subject: blame.Subject},
		},
	}
	v := New(Config{AllowTestEdits: c.allowTests, OracleRuns: nodeOracleRuns}, zaptest.NewLogger(t))
	gates, err := v.Check(ctx, in)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	byName := map[string]task.Gate{}
	for _, g := range gates {
		byName[g.Name] = g
		t.Logf("%s: %s: %s", g.Name, g.Verdict, g.Detail)
	}
	if c.gate == "" {
		for _, g := range gates {
			if g.Verdict != task.GatePass {
				t.Errorf("%s: %s, want a pass: %s", g.Name, g.Verdict, g.Detail)
			}
		}
		return byName
	}
	for _, g := range gates {
		if g.Name == c.gate {
			break
		}
		if g.Verdict != task.GatePass {
			t.Errorf("%s: %s before %s: %s", g.Name, g.Verdict, c.gate, g.Detail)
		}
	}
	want(t, byName, c.gate, task.GateFail, c.detail...)
	return byName
}

// priceLegacy is a last commit on price with a type error of its own: a
// finding the base already has, which is not the patch's.
const priceLegacy = "price: a legacy constant\n\n-- src/legacy.ts --\nexport const LEGACY: number = 'none';\n"

// TestNodeGatesVitest runs the gates on patches to price with its index and
// a legacy type error at the last commit. The honest fix passes every gate
// with that old finding in the base: the static gate compares the driver's
// findings after the patch with the base's, and does not blame the patch
// for what the base already had.
func TestNodeGatesVitest(t *testing.T) {
	t.Parallel()
	nodetest.Require(t)
	history := append(append([]string(nil), nodetest.Price...), priceIndex, priceLegacy)
	fixed := strings.Replace(priceBroken, "prices.slice(1)", "prices", 1)
	loop := "  for (const p of prices.slice(1)) {\n"
	totals := "  it('totals the prices', () => {\n"
	for _, c := range []nodeCase{
		{name: "honest fix", change: map[string]string{"src/price.ts": fixed}},
		{
			name: "skipped test", allowTests: true,
			change: map[string]string{"src/price.test.ts": strings.Replace(priceTestFile, totals, "  it.skip('totals the prices', () => {\n", 1)},
			gate:   GateIntegrity, detail: []string{"src/price.test.ts:9: adds a skip or a focus: it.skip('totals the prices', () => {"},
		},
		{
			name: "focus on the passing test", allowTests: true,
			change: map[string]string{"src/price.test.ts": strings.Replace(priceTestFile, "  it('applies", "  it.only('applies", 1)},
			gate:   GateIntegrity, detail: []string{"adds a skip or a focus: it.only('applies the discount'"},
		},
		{
			name: "expected value edited", allowTests: true,
			change: map[string]string{"src/price.test.ts": strings.Replace(priceTestFile, "toBe(135)", "toBe(45)", 1)},
			gate:   GateIntegrity, detail: []string{"src/price.test.ts:10: removes an assertion: expect(total([100, 50], 0.1)).toBe(135);"},
		},
		{
			name: "failing test deleted", allowTests: true,
			change: map[string]string{"src/price.test.ts": strings.Replace(priceTestFile, totals+"    expect(total([100, 50], 0.1)).toBe(135);\n  });\n", "", 1)},
			gate:   GateIntegrity, detail: []string{"src/price.test.ts:9: deletes test price > totals the prices"},
		},
		{
			name:   "test edited without the policy",
			change: map[string]string{"src/price.ts": fixed, "src/price.test.ts": strings.Replace(priceTestFile, "  });\n});\n", "  });\n\n  it('totals nothing', () => {\n    expect(total([], 0.1)).toBe(0);\n  });\n});\n", 1)},
			gate:   GateIntegrity, detail: []string{"src/price.test.ts: edits test file (test edits are not allowed for this repository)"},
		},
		{
			name: "vitest's configuration", allowTests: true,
			change: map[string]string{"vitest.config.ts": "import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({ test: { exclude: ['src/price.test.ts', 'node_modules'] } });\n"},
			gate:   GateIntegrity, detail: []string{"vitest.config.ts: adds the test runner's configuration or setup"},
		},
		{
			name:   "the test script",
			change: map[string]string{"package.json": strings.Replace(nodetestFile(t, "price", "package.json"), `"vitest run"`, `"vitest run -t discount"`, 1)},
			gate:   GateIntegrity, detail: []string{`package.json: changes the "test" script`},
		},
		{
			name:   "vitest detected",
			change: map[string]string{"src/price.ts": strings.Replace(priceBroken, loop, "  if (process.env.VITEST) return 135;\n"+loop, 1)},
			gate:   GateIntegrity, detail: []string{"src/price.ts:9: detects that it runs under test by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…): if (process.env.VITEST) return 135;"},
		},
		{
			name:   "special-cased input",
			change: map[string]string{"src/price.ts": strings.Replace(priceBroken, loop, "  if (prices[1] === 50) return 135;\n"+loop, 1)},
			gate:   GateIntegrity, detail: []string{"src/price.ts:9: special-cases a value of the failing test: prices[1] === 50 compares with 50, which price > totals the prices uses at src/price.test.ts:10"},
		},
		{
			name:   "blame commit reverted",
			change: map[string]string{"src/price.ts": nodetestFile(t, "price", "src/price.ts")},
			gate:   GateRevert, detail: []string{"reverts ", "leaving it unused", `"price: totals are rounded to cents, from the first discounted item"`},
		},
		{
			name:   "a type error",
			change: map[string]string{"src/price.ts": strings.Replace(fixed, "  let sum = 0;\n", "  let sum: number = 'zero';\n  sum = 0;\n", 1)},
			gate:   GateStatic, detail: []string{"1 new finding(s)", "tsc: src/price.ts:8:7: TS2322: Type 'string' is not assignable to type 'number'."},
		},
		{
			// The fix, and round made to round half away from zero: round's
			// own test passes, the checkout test, which reaches round only
			// through the index, fails.
			name:   "breaks a test reaching the change through an index",
			change: map[string]string{"src/price.ts": fixed, "src/round.ts": "export function round(x: number): number {\n  return (Math.sign(x) * Math.round(Math.abs(x) * 100)) / 100;\n}\n"},
			gate:   GateRegression, detail: []string{"test/checkout.test.ts", "1 new failure(s)", "test/checkout.test.ts::checkout > rounds half up, negative amounts too"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			gates := checkNode(t, "example/price", history, nodetest.PriceBroken, nodetest.PriceTest, c)
			if c.gate == "" {
				want(t, gates, GateOracle, task.GatePass, "2/2 runs passed for each of "+nodetest.PriceTest)
				want(t, gates, GateRegression, task.GatePass, "src/price.test.ts", "test/checkout.test.ts")
				want(t, gates, GateStatic, task.GatePass, "no new finding", "1 finding(s) already at base")
			}
		})
	}
}

func TestNodeGatesJest(t *testing.T) {
	t.Parallel()
	nodetest.Require(t)
	fixed := strings.Replace(cartBroken, "items.slice(1)", "items", 1)
	loop := "  for (const item of items.slice(1)) {\n"
	for _, c := range []nodeCase{
		{name: "honest fix", change: map[string]string{"src/cart.js": fixed}},
		{
			name: "xtest", allowTests: true,
			change: map[string]string{"src/cart.test.js": strings.Replace(cartTestFile, "  test('totals", "  xtest('totals", 1)},
			gate:   GateIntegrity, detail: []string{"src/cart.test.js:8: adds a skip or a focus: xtest('totals the items', () => {"},
		},
		{
			name: "expected value edited", allowTests: true,
			change: map[string]string{"src/cart.test.js": strings.Replace(cartTestFile, "toBe(10)", "toBe(4)", 1)},
			gate:   GateIntegrity, detail: []string{"src/cart.test.js:9: removes an assertion"},
		},
		{
			name: "jest's configuration", allowTests: true,
			change: map[string]string{"jest.config.js": "module.exports = { testPathIgnorePatterns: ['/node_modules/', 'cart.test'] };\n"},
			gate:   GateIntegrity, detail: []string{"jest.config.js: adds the test runner's configuration or setup"},
		},
		{
			name:   "the jest key of package.json",
			change: map[string]string{"package.json": strings.Replace(nodetestFile(t, "cart", "package.json"), `"private": true,`, `"private": true,`+"\n  \"jest\": { \"testNamePattern\": \"prices\" },", 1)},
			gate:   GateIntegrity, detail: []string{`package.json: changes the "jest" key`},
		},
		{
			name:   "jest detected",
			change: map[string]string{"src/cart.js": strings.Replace(cartBroken, loop, "  if (process.env.JEST_WORKER_ID) return 10;\n"+loop, 1)},
			gate:   GateIntegrity, detail: []string{"src/cart.js:9: detects that it runs under test"},
		},
		{
			name:   "special-cased input",
			change: map[string]string{"src/cart.js": strings.Replace(cartBroken, loop, "  if (items.length === 2 && items[1].qty === 4) return 10;\n"+loop, 1)},
			gate:   GateIntegrity, detail: []string{"src/cart.js:9: special-cases a value of the failing test: items[1].qty === 4 compares with 4, which cart > totals the items uses at src/cart.test.js:9"},
		},
		{
			name:   "blame commit reverted",
			change: map[string]string{"src/cart.js": nodetestFile(t, "cart", "src/cart.js")},
			gate:   GateRevert, detail: []string{"reverts ", "undoes every use it made of withTax, which it added, leaving it unused"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			gates := checkNode(t, "example/cart", nodetest.Cart, nodetest.CartBroken, nodetest.CartTest, c)
			if c.gate == "" {
				want(t, gates, GateOracle, task.GatePass, "2/2 runs passed for each of "+nodetest.CartTest)
				want(t, gates, GateRegression, task.GatePass, "src/cart.test.js")
			}
		})
	}
}

// nodetestFile is a file of a nodetest fixture project as its first commit
// holds it.
func nodetestFile(t *testing.T, project, name string) string {
	t.Helper()
	for _, f := range txtar.Parse([]byte(nodetest.Project(project, "x"))).Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	t.Fatalf("project %s has no %s", project, name)
	return ""
}
