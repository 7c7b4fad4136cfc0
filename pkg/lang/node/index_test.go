package node

import (
	"slices"
	"strings"
	"testing"
)

func TestIndexFindsDeclarations(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"src/price.ts": `import { round } from './round';

export interface Priced {
  price: number;
}

export type Rate = number;

export function discount(price: number, rate: Rate): number {
  return price - price * rate;
}

export const total = (prices: number[], rate: Rate): number => {
  const inner = () => 1;
  return prices.reduce((s, p) => s + discount(p, rate), inner());
};

export class Cart<T extends Priced> {
  private items: T[] = [];
  add(item: T): void {
    this.items.push(item);
  }
  get size(): number {
    return this.items.length;
  }
}

export default function main() {}
`,
		"lib/cart.js": `const helper = function (x) { return x; };

class Basket extends Array {
  total() { return 0; }
}

module.exports = { helper, Basket };
`,
		"src/view.tsx":              "export const View = () => <div>hi</div>;\n",
		"src/price.test.ts":         "import { it } from 'vitest';\nit('x', () => {});\nfunction fixture() {}\n",
		"node_modules/dep/index.js": "function hidden() {}\n",
	})
	idx, err := Driver{}.Index(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range idx.All() {
		got = append(got, s.Kind+" "+s.QualifiedName()+" "+s.Location())
	}
	for _, want := range []string{
		"interface Priced src/price.ts:3",
		"type Rate src/price.ts:7",
		"func discount src/price.ts:9",
		"func total src/price.ts:13",
		"struct Cart src/price.ts:18",
		"method Cart.add src/price.ts:20",
		"method Cart.size src/price.ts:23",
		"func main src/price.ts:28",
		"func helper lib/cart.js:1",
		"struct Basket lib/cart.js:3",
		"method Basket.total lib/cart.js:4",
		"func View src/view.tsx:1",
		"func fixture src/price.test.ts:3",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, s := range got {
		if strings.Contains(s, "inner") || strings.Contains(s, "hidden") {
			t.Errorf("indexed %q", s)
		}
	}
	for _, s := range idx.All() {
		if s.Name == "discount" && s.Signature != "export function discount(price: number, rate: Rate): number" {
			t.Errorf("signature = %q", s.Signature)
		}
	}
}

func TestDeclaredTests(t *testing.T) {
	src := []byte("describe('price', () => {\n  it('applies the discount', () => {});\n  describe.each([1])('x %s', () => { it('hidden', () => {}); });\n  describe(`nested`, function () {\n    test.skip(\"it's \\\"quoted\\\"\", () => {});\n  });\n});\ntest('top', () => {});\nit(name, () => {});\n")
	var got []string
	for _, d := range declaredTests("a.test.ts", src) {
		got = append(got, d.name())
	}
	want := []string{"price > applies the discount", `price > nested > it's "quoted"`, "top"}
	if !slices.Equal(got, want) {
		t.Errorf("declared = %q, want %q", got, want)
	}
}
