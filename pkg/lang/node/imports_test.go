package node

import (
	"slices"
	"strings"
	"testing"
)

func TestImports(t *testing.T) {
	t.Parallel()
	src := `import { a } from "./a";
import type { B } from "../types/b.js";
import "./side-effect.css";
import lodash from "lodash";
export * from "./re";
export { c } from "./c.mjs";
const d = require("./d");
const e = await import("./e.js");
vi.mock("./mocked", () => ({}));
jest.mock("../mocked2");
function late() {
  return require("./late");
}
const f = require(name);
`
	got := imports("src/mod.ts", []byte(src))
	for _, want := range []string{"./a", "../types/b.js", "./re", "./c.mjs", "./d", "./e.js", "./mocked", "../mocked2", "./late"} {
		if !slices.Contains(got, want) {
			t.Errorf("imports of src/mod.ts = %v: no %s", got, want)
		}
	}
	if slices.Contains(got, "lodash") {
		t.Errorf("imports of src/mod.ts = %v: a package's name is not a module of the checkout", got)
	}
}

func TestResolveImport(t *testing.T) {
	t.Parallel()
	exists := map[string]bool{}
	for _, f := range []string{"src/price.ts", "src/cart.tsx", "src/util.js", "src/esm.mts", "src/shop/index.ts", "lib/old.cjs", "index.js"} {
		exists[f] = true
	}
	for _, c := range []struct{ from, spec, want string }{
		{"src/a.ts", "./price", "src/price.ts"},
		{"src/a.ts", "./price.js", "src/price.ts"},
		{"src/a.ts", "./cart.js", "src/cart.tsx"},
		{"src/a.ts", "./util.js", "src/util.js"},
		{"src/a.ts", "./esm.mjs", "src/esm.mts"},
		{"src/a.ts", "./shop", "src/shop/index.ts"},
		{"src/a.ts", "./shop/index.js", "src/shop/index.ts"},
		{"test/a.test.js", "../lib/old.cjs", "lib/old.cjs"},
		{"test/a.test.js", "..", "index.js"},
		{"test/a.test.js", "../../outside", ""},
		{"src/a.ts", "./missing", ""},
	} {
		if got := resolveImport(c.from, c.spec, exists); got != c.want {
			t.Errorf("resolveImport(%s, %s) = %q, want %q", c.from, c.spec, got, c.want)
		}
	}
}

func TestImportersNearestFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"src/price.ts":             "export const price = (q: number) => q * 1000;\n",
		"src/index.ts":             "export * from \"./price\";\nexport { Cart } from \"./cart.js\";\n",
		"src/cart.ts":              "import { price } from \"./price.js\";\nexport class Cart {}\n",
		"src/price.test.ts":        "import { price } from \"./price.js\";\n",
		"lib/wrap.js":              "const { price } = require(\"../src/price.js\");\nmodule.exports = { price };\n",
		"test/mocked.test.ts":      "vi.mock(\"../src/price\");\n",
		"test/cart.test.ts":        "import { Cart } from \"../src/cart\";\n",
		"test/index.test.ts":       "import * as shop from \"../src\";\n",
		"test/dynamic.test.ts":     "test(\"x\", async () => { await import(\"../src/cart.js\"); });\n",
		"test/legacy.test.js":      "const { price } = require(\"../lib/wrap\");\n",
		"test/unrelated.test.ts":   "import { it } from \"vitest\";\n",
		"node_modules/x/a.test.js": "require(\"../../src/price\");\n",
	})
	mods, err := importGraph(dir)
	if err != nil {
		t.Fatal(err)
	}
	isTest := Driver{}.IsTestFile
	got := importers(mods, []string{"src/price.ts"}, isTest, map[string]bool{"src/price.test.ts": true})
	var names []string
	for _, d := range got {
		names = append(names, d.Dir)
		if d.Via != "src/price.ts" {
			t.Errorf("%s reached via %s", d.Dir, d.Via)
		}
	}
	want := "test/mocked.test.ts test/cart.test.ts test/dynamic.test.ts test/index.test.ts test/legacy.test.js"
	if strings.Join(names, " ") != want {
		t.Errorf("importers = %v, want %s (nearest first; the skipped, the unrelated and node_modules left out)", names, want)
	}
	if len(got) > 0 && (got[0].Hops != 1 || got[len(got)-1].Hops != 2) {
		t.Errorf("hops = %+v, want 1 for the direct importer, 2 through a module", got)
	}
}
