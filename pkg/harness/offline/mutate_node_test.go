package offline

import (
	"fmt"
	"testing"
)

func TestMutationsJS(t *testing.T) {
	cases := []struct {
		path string
		line string
		want []string // some of the mutated lines expected
		not  []string
	}{
		{"src/price.ts", "    if (qty > tier.minQty) {", []string{"    if (qty >= tier.minQty) {", "    if (qty < tier.minQty) {"}, nil},
		{"src/a.js", "  return a === b;", []string{"  return a !== b;"}, []string{"  return a != b;"}},
		{"src/a.js", "  return a !== b;", []string{"  return a === b;"}, []string{"  return a == b;"}},
		{"src/a.js", "  return a == null;", []string{"  return a != null;"}, nil},
		{"src/a.mjs", "  if (ok && n > 0) {", []string{"  if (ok || n > 0) {", "  if (ok && n >= 0) {", "  if (!(ok && n > 0)) {", "  if (ok && n > 1) {"}, nil},
		{"src/a.ts", "  if (!done) return;", []string{"  if (done) return;"}, nil},
		{"src/a.ts", "  let found = false;", []string{"  let found = true;"}, nil},
		{"src/a.ts", "  return total - total * pct / 100;", []string{"  return total + total * pct / 100;", "  return total - total / pct / 100;"}, nil},
		{"src/a.ts", "  return xs[xs.length - 1];", []string{"  return xs[xs.length];", "  return xs[xs.length - 2];"}, []string{"  return xs[xs.length - 1 - 1];"}},
		{"src/a.ts", "  for (let i = 0; i < xs.length; i++) {", []string{"  for (let i = 0; i <= xs.length; i++) {", "  for (let i = 0; i < xs.length - 1; i++) {", "  for (let i = 0; i < xs.length; i--) {", "  for (let i = 1; i < xs.length; i++) {"}, nil},
		{"src/a.ts", "  return xs.slice(start, end);", []string{"  return xs.slice(start, end - 1);", "  return xs.slice(start + 1, end);", "  return xs.slice(start, end + 1);"}, nil},
		{"src/a.ts", "  return xs[i];", []string{"  return xs[i - 1];", "  return xs[i + 1];"}, nil},
		{"src/a.js", "  for (const item of items.slice(1)) {", []string{"  for (const item of items.slice(0)) {", "  for (const item of items.slice(2)) {"}, nil},
		{"src/a.ts", "  const n = opts.limit ?? 10;", []string{"  const n = opts.limit || 10;", "  const n = opts.limit ?? 11;"}, nil},
		{"src/a.ts", "  const msg = `a < ${b}` + name;", nil, []string{"  const msg = `a <= ${b}` + name;", "  const msg = `a < ${b}` - name;"}},
		{"src/a.ts", "  const m: Map<string, number> = new Map<string, number>();", nil, []string{"  const m: Map<=string, number> = new Map<string, number>();"}},
		{"src/a.ts", "  // if (a < b) {", nil, nil},
		{"src/a.ts", "   * returns a < b", nil, nil},
		{"src/a.ts", "import { a } from './b';", nil, nil},
		{"src/a.ts", "export function quote(sku: string, qty = 1): number {", []string{"export function quote(sku: string, qty = 2): number {"}, []string{"export function quote(sku: string, qty = 1): number {"}},
		{"src/a.ts", "  discount(qty: number, min = 10): number {", []string{"  discount(qty: number, min = 11): number {"}, nil},
		{"src/a.ts", "const isAdult = (p: Person) => p.age > 18;", []string{"const isAdult = (p: Person) => p.age >= 18;", "const isAdult = (p: Person) => p.age > 19;"}, nil},
		{"src/a.tsx", "  return <Item key={id} />;", nil, nil},
		{"src/a.ts", "  return -1;", []string{"  return -2;"}, []string{"  return +1;"}},
		{"src/a.ts", "  const v = a.b!.c + 1;", []string{"  const v = a.b!.c - 1;", "  const v = a.b!.c;"}, []string{"  const v = a.b.c + 1;"}},
	}
	for _, tc := range cases {
		got := map[string]bool{}
		for _, m := range mutationsIn(tc.path, tc.line) {
			got[m.New] = true
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("mutationsIn(%q) lacks %q; got %q", tc.line, w, keys(got))
			}
		}
		for _, n := range tc.not {
			if got[n] {
				t.Errorf("mutationsIn(%q) has %q", tc.line, n)
			}
		}
		if tc.want == nil && len(got) > 0 {
			t.Errorf("mutationsIn(%q) = %q, want none", tc.line, keys(got))
		}
	}
	// A slice's bound one off is as likely as an index's.
	bound := false
	for _, m := range mutationsIn("src/a.js", "  return items.slice(1);") {
		bound = bound || m.New == "  return items.slice(0);" && m.Template == TplOffByOne && m.Prior >= 3
	}
	if !bound {
		t.Errorf("no slice bound template on .slice(1)")
	}
	// The boundary flip comes first, in the file's own spelling.
	ms := mutationsIn("src/price.ts", "    if (qty > tier.minQty) {")
	if len(ms) == 0 || ms[0].Template != TplBoundary || ms[0].New != "    if (qty >= tier.minQty) {" {
		t.Errorf("first mutation = %+v", ms)
	}
}

const jsFuncsSrc = `import { Tier } from "./tier";

/** Prices in cents. A "}" in a comment { */
export function discount(qty: number, tiers: Tier[]): number {
  let best = 0;
  for (const t of tiers) {
    if (qty >= t.minQty && t.percentOff > best) {
      best = t.percentOff;
    }
  }
  return best;
}

export const quote = async (sku: string, qty: number): Promise<number> => {
  const label = ` + "`${sku}: {${qty}}`" + `;
  const re = /[{}]+/g;
  return price(sku) * qty - "}".length;
};

const double = (x: number) => x * 2;
const inc = x =>
  x + 1;

export class Catalog {
  private tiers: Tier[] = [];

  constructor(private readonly name: string) {}

  add(tier: Tier): void {
    this.tiers.push(tier);
  }

  get size(): number {
    return this.tiers.length;
  }

  handle = (e: Event) => {
    return e;
  };
}

function wrap<T>(f: (x: T) => T): Array<T> {
  return [f];
}
`

func TestJSFuncSpan(t *testing.T) {
	f := modelOf("src/price.ts", jsFuncsSrc)
	for n, want := range map[int]string{
		4: "discount:4-12", 8: "discount:4-12", 12: "discount:4-12",
		15: "quote:14-18", 16: "quote:14-18", 17: "quote:14-18",
		20: "double:20-20", 22: "inc:21-22",
		27: "constructor:27-27", 30: "add:29-31", 34: "size:33-35", 38: "handle:37-39",
		42: "wrap:42-44",
	} {
		s, e, name, ok := f.funcSpan(n)
		if got := fmt.Sprintf("%s:%d-%d", name, s, e); !ok || got != want {
			t.Errorf("line %d: %s (%v), want %s", n, got, ok, want)
		}
	}
	for _, n := range []int{1, 3, 13, 19, 24, 25} {
		if s, e, name, ok := f.funcSpan(n); ok {
			t.Errorf("line %d is in %s %d-%d", n, name, s, e)
		}
	}
	funcs := f.funcs()
	if funcs["discount"] != [2]int{4, 12} || funcs["quote"] != [2]int{14, 18} || funcs["add"] != [2]int{29, 31} {
		t.Errorf("funcs = %v", funcs)
	}
	// A line no read showed: the functions around it have no known end.
	part := modelOf("src/price.ts", jsFuncsSrc)
	part.lines[8] = unknown
	if _, _, name, ok := part.funcSpan(5); ok {
		t.Errorf("a function with an unknown line has a span: %s", name)
	}
	if _, _, name, ok := part.funcSpan(16); !ok || name != "quote" {
		t.Errorf("quote after an unknown line: %s %v", name, ok)
	}
}
