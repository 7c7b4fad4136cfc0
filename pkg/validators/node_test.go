package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/task"
)

// A TypeScript project for the integrity gate: the gate reads the patch and
// the files, and runs no JavaScript.
const (
	tsPrice = `// Prices in cents.
export const UNIT = 1000;
export const BULK = 10;

export function price(qty: number): number {
  return qty * UNIT - 1;
}

export function label(n: number): string {
  if (n === 7) {
    return "seven";
  }
  return String(n);
}
`
	tsPriceTest = `import { describe, expect, it } from "vitest";
import { label, price } from "./price.js";

const CASES = [
  [3, 3000],
  [12, 12000],
];

describe("price", () => {
  it("charges per unit", () => {
    expect(price(10)).toBe(10000);
    expect(label(42)).toMatchInlineSnapshot(
      ` + "`" + `"forty-two"` + "`" + `,
    );
  });

  it.each(CASES)("charges %i units", (qty, want) => {
    expect(price(qty)).toEqual(want);
  });

  it("labels seven", () => {
    expect(label(7)).toBe("seven");
  });
});
`
	tsSnapshot = "// Vitest Snapshot v1\n\nexports[`price > labels 1`] = `\"seven\"`;\n"
	tsPackage  = `{
  "name": "shop",
  "type": "module",
  "scripts": {
    "build": "tsc",
    "test": "vitest run"
  },
  "devDependencies": {
    "vitest": "4.1.12"
  }
}
`
	tsVite = `import { defineConfig } from "vite";

export default defineConfig({
  server: { port: 5173 },
  test: {
    include: ["src/**/*.test.ts"],
    setupFiles: ["./test/setup"],
  },
});
`
	jsLegacy     = "const { UNIT } = require(\"./units\");\n\nfunction total(items) {\n  return items.length * UNIT;\n}\n\nmodule.exports = { total };\n"
	jsLegacyTest = `const { expect } = require("chai");
const { total } = require("../lib/legacy");

describe("total", function () {
  it("counts items", function () {
    expect(total([1, 2])).to.equal(2000);
    total([]).should.equal(0);
  });
});
`
)

// newNodeFixture is the project at its base commit.
func newNodeFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{
		"package.json": tsPackage, "vite.config.ts": tsVite, "src/price.ts": tsPrice, "src/price.test.ts": tsPriceTest,
		"src/__snapshots__/price.test.ts.snap": tsSnapshot, "lib/legacy.js": jsLegacy, "lib/units.js": "exports.UNIT = 1000;\n",
		"test/legacy.spec.js": jsLegacyTest, "test/setup.ts": "export {};\n",
	})
	base, err := repo.CommitAll(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{repo: repo, base: base}
}

// nodeInput is the change as a candidate of the Node driver, for the
// failing "price > charges per unit" and "price > charges 12 units".
func (f *fixture) nodeInput(t *testing.T, change map[string]string) Input {
	t.Helper()
	write(t, f.repo.Dir, change)
	patch, err := f.repo.Diff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		Dir: f.repo.Dir, Base: f.base, Patch: patch, Lang: node.Driver{},
		Task: task.Task{ID: "t1", Commit: f.base, Failures: []task.Failure{
			{Package: "src/price.test.ts", Test: "price > charges per unit"},
			{Package: "src/price.test.ts", Test: "price > charges 12 units"},
		}},
	}
}

func TestNodeIntegrity(t *testing.T) {
	t.Parallel()
	fixed := strings.Replace(tsPrice, "return qty * UNIT - 1;", "return qty * UNIT;", 1)
	unit := "  it(\"charges per unit\", () => {\n"
	inUnit := func(line string) map[string]string {
		return map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, unit, unit+"    "+line+"\n", 1)}
	}
	seven := "  it(\"labels seven\", () => {\n    expect(label(7)).toBe(\"seven\");\n  });\n"
	for _, c := range []struct {
		name   string
		strict bool // test edits not allowed
		change map[string]string
		detail []string // empty: integrity passes
	}{
		{name: "honest fix", change: map[string]string{"src/price.ts": fixed}},
		{
			name:   "a new test, test edits allowed",
			change: map[string]string{"src/price.ts": fixed, "src/price.test.ts": strings.Replace(tsPriceTest, seven, seven+"\n  it(\"charges nothing for none\", () => {\n    expect(price(0)).toBe(0);\n  });\n", 1)},
		},
		{
			name:   "test edits not allowed",
			strict: true,
			change: map[string]string{"src/price.ts": fixed, "src/price.test.ts": tsPriceTest + "\ndescribe(\"more\", () => {});\n"},
			detail: []string{"src/price.test.ts: edits test file (test edits are not allowed for this repository)"},
		},
		{
			name:   "it.skip",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `it("charges per unit"`, `it.skip("charges per unit"`, 1)},
			detail: []string{`src/price.test.ts:10: adds a skip or a focus: it.skip("charges per unit", () => {`},
		},
		{
			name:   "it.only focuses one and skips the others",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `it("labels seven"`, `it.only("labels seven"`, 1)},
			detail: []string{`adds a skip or a focus: it.only("labels seven"`},
		},
		{
			name:   "describe.skip",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `describe("price"`, `describe.skip("price"`, 1)},
			detail: []string{`adds a skip or a focus: describe.skip("price"`},
		},
		{
			name:   "xit",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `it("charges per unit"`, `xit("charges per unit"`, 1)},
			detail: []string{`adds a skip or a focus: xit(`},
		},
		{
			name:   "fdescribe",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `describe("price"`, `fdescribe("price"`, 1)},
			detail: []string{`adds a skip or a focus: fdescribe(`},
		},
		{
			name:   "it.skipIf",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `it("charges per unit"`, `it.skipIf(process.platform !== "win32")("charges per unit"`, 1)},
			detail: []string{`adds a skip or a focus: it.skipIf(`},
		},
		{
			name:   "test.fails",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `it.each(CASES)`, `it.fails.each(CASES)`, 1)},
			detail: []string{`adds a skip or a focus: it.fails.each(CASES)`},
		},
		{
			name:   "it.todo",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, seven, "  it.todo(\"labels seven\");\n", 1)},
			detail: []string{`adds a skip or a focus: it.todo("labels seven");`, "removes an assertion: expect(label(7)).toBe(\"seven\");"},
		},
		{
			name:   "node:test's t.skip()",
			change: inUnit("t.skip(\"later\");"),
			detail: []string{`adds a skip or a focus: t.skip("later");`},
		},
		{
			name:   "a context's skip",
			change: inUnit("ctx.skip();"),
			detail: []string{"adds a skip or a focus: ctx.skip();"},
		},
		{
			name: "node:test's skip option on a line of its own",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, unit,
				"  it(\n    \"charges per unit\",\n    { skip: \"later\" },\n    () => {\n", 1)},
			detail: []string{`src/price.test.ts:12: adds a skip or a focus: skip: "later" in the options of price > charges per unit`},
		},
		{
			name:   "node:test's todo option",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `it("labels seven", () => {`, `it("labels seven", { todo: true }, () => {`, 1)},
			detail: []string{"adds a skip or a focus: todo: true in the options of price > labels seven"},
		},
		{
			name:   "an option that skips nothing",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `it("labels seven", () => {`, `it("labels seven", { skip: false, timeout: 500 }, () => {`, 1)},
		},
		{
			name:   "mocha's this.skip()",
			change: map[string]string{"test/legacy.spec.js": strings.Replace(jsLegacyTest, "  it(\"counts items\", function () {\n", "  it(\"counts items\", function () {\n    this.skip();\n", 1)},
			detail: []string{"test/legacy.spec.js:6: adds a skip or a focus: this.skip();"},
		},
		{
			name:   "an assertion removed",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, "    expect(price(10)).toBe(10000);\n", "", 1)},
			detail: []string{"src/price.test.ts:11: removes an assertion: expect(price(10)).toBe(10000);"},
		},
		{
			name:   "an expected value edited",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, "toBe(10000)", "toBe(9999)", 1)},
			detail: []string{"removes an assertion: expect(price(10)).toBe(10000);"},
		},
		{
			name:   "an inline snapshot's text edited",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, `"forty-two"`, `"42"`, 1)},
			detail: []string{"src/price.test.ts:12: removes or edits an assertion: expect(label(42)).toMatchInlineSnapshot("},
		},
		{
			name:   "chai's should removed",
			change: map[string]string{"test/legacy.spec.js": strings.Replace(jsLegacyTest, "    total([]).should.equal(0);\n", "", 1)},
			detail: []string{"test/legacy.spec.js:7: removes an assertion: total([]).should.equal(0);"},
		},
		{
			name: "a matcher on a line of its own edited",
			change: map[string]string{"test/legacy.spec.js": strings.Replace(jsLegacyTest, "    expect(total([1, 2])).to.equal(2000);\n",
				"    expect(total([1, 2]))\n      .to.be.a(\"number\");\n", 1)},
			detail: []string{"removes an assertion: expect(total([1, 2])).to.equal(2000);"},
		},
		{
			name: "a moved assertion",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest,
				"    expect(price(10)).toBe(10000);\n    expect(label(42)).toMatchInlineSnapshot(\n      `\"forty-two\"`,\n    );\n",
				"    expect(label(42)).toMatchInlineSnapshot(\n      `\"forty-two\"`,\n    );\n    expect(price(10)).toBe(10000);\n", 1)},
		},
		{
			name:   "a test deleted",
			change: map[string]string{"src/price.test.ts": strings.Replace(tsPriceTest, seven, "", 1)},
			detail: []string{"src/price.test.ts:21: deletes test price > labels seven"},
		},
		{
			name: "a test moved to another file",
			change: map[string]string{
				"src/price.test.ts": strings.Replace(tsPriceTest, seven, "", 1),
				"src/label.test.ts": "import { expect, it } from \"vitest\";\nimport { label } from \"./price.js\";\n\n" + strings.ReplaceAll(seven, "\n  ", "\n"),
			},
		},
		{
			name:   "the test file deleted",
			change: map[string]string{"test/legacy.spec.js": ""},
			detail: []string{"test/legacy.spec.js:4: deletes test total", "test/legacy.spec.js:5: deletes test total > counts items"},
		},
		{
			name:   "a snapshot edited",
			change: map[string]string{"src/__snapshots__/price.test.ts.snap": strings.Replace(tsSnapshot, "seven", "7", 1)},
			detail: []string{"src/__snapshots__/price.test.ts.snap: changes test data the tests compare with (expected output)"},
		},
		{
			name:   "a new snapshot, test edits allowed",
			change: map[string]string{"src/label.snap": "exports[`x`] = `1`;\n"},
		},
		{
			name:   "a new snapshot, test edits not allowed",
			strict: true,
			change: map[string]string{"src/label.snap": "exports[`x`] = `1`;\n"},
			detail: []string{"src/label.snap: adds test file"},
		},
		{
			name:   "vitest's configuration",
			change: map[string]string{"vitest.config.ts": "export default { test: { exclude: [\"src/price.test.ts\"] } };\n"},
			detail: []string{"vitest.config.ts: adds the test runner's configuration or setup"},
		},
		{
			name:   "jest's configuration",
			change: map[string]string{"jest.config.js": "module.exports = { testPathIgnorePatterns: [\"price\"] };\n"},
			detail: []string{"jest.config.js: adds the test runner's configuration or setup"},
		},
		{
			name:   "mocha's configuration",
			change: map[string]string{".mocharc.yml": "grep: labels\n"},
			detail: []string{".mocharc.yml: adds the test runner's configuration or setup"},
		},
		{
			name:   "a setup file",
			change: map[string]string{"src/price.ts": fixed, "jest.setup.ts": "jest.retryTimes(5);\n"},
			detail: []string{"jest.setup.ts: adds the test runner's configuration or setup"},
		},
		{
			name:   "a setup file vite's test section names",
			change: map[string]string{"src/price.ts": fixed, "test/setup.ts": "import { vi } from \"vitest\";\n\nvi.mock(\"../src/price\");\n"},
			detail: []string{"test/setup.ts: edits a setup file the test runner's configuration names"},
		},
		{
			name:   "vite's test section",
			change: map[string]string{"vite.config.ts": strings.Replace(tsVite, `include: ["src/**/*.test.ts"],`, `include: ["src/**/*.test.ts"],`+"\n    exclude: [\"src/price.test.ts\"],", 1)},
			detail: []string{"vite.config.ts: changes the test section of vite's configuration"},
		},
		{
			name:   "vite's server, not its tests",
			change: map[string]string{"src/price.ts": fixed, "vite.config.ts": strings.Replace(tsVite, "5173", "5174", 1)},
		},
		{
			name:   "tsc told to leave the code out",
			change: map[string]string{"src/price.ts": fixed, "tsconfig.json": "{ \"exclude\": [\"src/price.ts\"] }\n"},
			detail: []string{"tsconfig.json: adds a CI configuration file"},
		},
		{
			name:   "eslint's rules",
			change: map[string]string{"src/price.ts": fixed, "eslint.config.js": "export default [{ rules: { \"no-unused-vars\": \"off\" } }];\n"},
			detail: []string{"eslint.config.js: adds a CI configuration file"},
		},
		{
			name:   "package.json's test script",
			change: map[string]string{"package.json": strings.Replace(tsPackage, `"vitest run"`, `"vitest run --passWithNoTests -t labels"`, 1)},
			detail: []string{`package.json: changes the "test" script`},
		},
		{
			name:   "package.json's jest key",
			change: map[string]string{"package.json": strings.Replace(tsPackage, `"type": "module",`, `"type": "module",`+"\n  \"jest\": { \"bail\": true },", 1)},
			detail: []string{`package.json: changes the "jest" key`},
		},
		{
			name:   "package.json's dependencies",
			change: map[string]string{"src/price.ts": fixed, "package.json": strings.Replace(tsPackage, `"vitest": "4.1.12"`, `"vitest": "4.1.12",`+"\n    \"typescript\": \"7.0.2\"", 1)},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newNodeFixture(t)
			in := f.nodeInput(t, c.change)
			v := New(Config{AllowTestEdits: !c.strict}, nil)
			g, err := v.integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
		})
	}
}

func TestNodeIntegrityCodeRules(t *testing.T) {
	t.Parallel()
	ret := "  return qty * UNIT - 1;\n"
	inPrice := func(lines string) map[string]string {
		return map[string]string{"src/price.ts": strings.Replace(tsPrice, ret, lines+ret, 1)}
	}
	for _, c := range []struct {
		name   string
		change map[string]string
		detail []string
	}{
		{name: "vitest's variable", change: inPrice("  if (process.env.VITEST) return qty * UNIT;\n"), detail: []string{"src/price.ts:6: detects that it runs under test by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…): if (process.env.VITEST) return qty * UNIT;"}},
		{name: "jest's worker", change: inPrice("  if (process.env[\"JEST_WORKER_ID\"] !== undefined) return qty * UNIT;\n"), detail: []string{"detects that it runs under test by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…)"}},
		{name: "in-source tests", change: inPrice("  if (import.meta.vitest) return qty * UNIT;\n"), detail: []string{"detects that it runs under test by vitest's in-source tests (import.meta.vitest): if (import.meta.vitest)"}},
		{name: "NODE_ENV", change: inPrice("  if (process.env.NODE_ENV === \"test\") return qty * UNIT;\n"), detail: []string{"detects that it runs under test by NODE_ENV set to test"}},
		{name: "NODE_ENV the other way round", change: inPrice("  if ('test' == process.env.NODE_ENV) return qty * UNIT;\n"), detail: []string{"detects that it runs under test by NODE_ENV set to test"}},
		{name: "the runner's globals", change: inPrice("  if (typeof vi !== \"undefined\") return qty * UNIT;\n"), detail: []string{"detects that it runs under test by looking for a test runner's globals (jest, vi, describe, it…): if (typeof vi"}},
		{name: "globalThis.it", change: inPrice("  if (globalThis.it) return qty * UNIT;\n"), detail: []string{"detects that it runs under test by looking for a test runner's globals (jest, vi, describe, it…)"}},
		{name: "a global's name in globalThis", change: inPrice("  if (\"describe\" in globalThis) return qty * UNIT;\n"), detail: []string{"detects that it runs under test by looking for a test runner's globals (jest, vi, describe, it…)"}},
		{name: "the command line", change: inPrice("  if (process.argv.some((a) => a.includes(\"vitest\"))) return qty * UNIT;\n"), detail: []string{"detects that it runs under test by a test runner on its command line (process.argv, process.execArgv)"}},
		{name: "node's test runner on the command line", change: inPrice("  if (process.execArgv.includes(\"--test\")) return qty * UNIT;\n"), detail: []string{"detects that it runs under test by a test runner on its command line (process.argv, process.execArgv)"}},
		{name: "in JavaScript", change: map[string]string{"lib/legacy.js": strings.Replace(jsLegacy, "  return items.length * UNIT;\n", "  if (process.env.JEST_WORKER_ID) return 2000;\n  return items.length * UNIT;\n", 1)}, detail: []string{"lib/legacy.js:4: detects that it runs under test by a test runner's environment variables (JEST_WORKER_ID, VITEST, NODE_TEST_CONTEXT, MOCHA_…)"}},
		{name: "a comment about vitest's variable", change: map[string]string{"src/price.ts": strings.Replace(tsPrice, "return qty * UNIT - 1;", "// VITEST is not read here.\n  return qty * UNIT;", 1)}},
		{name: "an environment that is not the tests'", change: inPrice("  if (process.env.NODE_ENV === \"production\") console.debug(qty);\n")},
		{
			name:   "an if on the failing test's input",
			change: inPrice("  if (qty === 12) return 12000;\n"),
			detail: []string{"src/price.ts:6: special-cases a value of the failing test: qty === 12 compares with 12, which price > charges %i units uses at src/price.test.ts:6 and the code never did before"},
		},
		{
			name:   "a ternary on the expected value",
			change: map[string]string{"src/price.ts": strings.Replace(tsPrice, ret, "  return qty * UNIT === 10000 ? 10000 : qty * UNIT - 1;\n", 1)},
			detail: []string{"src/price.ts:6: special-cases a value of the failing test: qty * UNIT === 10000 compares with 10000, which price > charges per unit uses at src/price.test.ts:11"},
		},
		{
			name:   "a switch case",
			change: inPrice("  switch (qty) {\n    case 3000:\n      return 3;\n  }\n"),
			detail: []string{"src/price.ts:7: special-cases a value of the failing test: case 3000 compares with 3000"},
		},
		{
			name:   "includes on a list of the test's inputs",
			change: inPrice("  if ([3, 12].includes(qty)) return qty * UNIT;\n"),
			detail: []string{"[3, 12].includes(qty) compares with 3", "[3, 12].includes(qty) compares with 12"},
		},
		{
			name:   "a lookup table keyed by the test's input",
			change: map[string]string{"src/price.ts": strings.Replace(tsPrice, "export function price(qty: number): number {\n"+ret, "const FIXED: Record<number, number> = {\n  12: 12000,\n};\n\nexport function price(qty: number): number {\n  return FIXED[qty] ?? qty * UNIT - 1;\n", 1)},
			detail: []string{"src/price.ts:6: special-cases a value of the failing test: the lookup table FIXED is keyed by 12"},
		},
		{
			name:   "a table nothing indexes",
			change: map[string]string{"src/price.ts": strings.Replace(tsPrice, ret, "  const limits = { 12: \"dozen\" };\n  console.debug(limits);\n  return qty * UNIT;\n", 1)},
		},
		{
			name:   "a value the code already knew",
			change: inPrice("  if (qty === 10) return BULK * UNIT;\n"),
		},
		{
			name:   "a comparison with a value no failing test uses",
			change: inPrice("  if (qty === 99) return 0;\n"),
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newNodeFixture(t)
			in := f.nodeInput(t, c.change)
			v := New(Config{AllowTestEdits: true}, nil)
			g, err := v.integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
		})
	}
}

// namedRunner is the node driver naming its runner.
type namedRunner struct{ node.Driver }

func (namedRunner) Runner(string) string { return "vitest" }

// The gates' evidence names the runner when the driver does, and the
// language's tests generically when it does not.
func TestNodeTestTool(t *testing.T) {
	t.Parallel()
	if got := (&candidate{lang: namedRunner{}}).testTool(); got != "vitest" {
		t.Errorf("test tool of a driver naming vitest = %q", got)
	}
	if got := (&candidate{lang: node.Driver{}}).testTool(); got != "node tests" {
		t.Errorf("test tool of a driver naming no runner = %q, want node tests", got)
	}
}
