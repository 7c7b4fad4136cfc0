package node

import (
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// tsc with the repository's own TypeScript: the fixture type-checks; an
// edit that assigns a string to a number is a finding keyed without its
// position, in the file it is in.
func TestCheckTypeErrors(t *testing.T) {
	ctx, d, dir := fixture(t, nodetest.Price...)
	fs, err := d.Check(ctx, dir, []string{"src/price.ts"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 0 {
		t.Fatalf("findings on the fixture: %+v", fs)
	}
	write(t, dir, map[string]string{"src/round.ts": "export function round(x: number): number {\n  const cents: number = 'x';\n  return Math.round(x * 100) / 100 + cents;\n}\n"})
	fs, err = d.Check(ctx, dir, []string{"src/round.ts", "README.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 {
		t.Fatalf("findings = %+v", fs)
	}
	want := "tsc: src/round.ts: TS2322: Type 'string' is not assignable to type 'number'."
	if fs[0].Key != want || !strings.HasPrefix(fs[0].Text, "tsc: src/round.ts:2:9: TS2322") {
		t.Errorf("finding = %+v, want key %q", fs[0], want)
	}
	if fs, err := d.Check(ctx, dir, []string{"README.md"}); err != nil || len(fs) != 0 {
		t.Errorf("no source among the files: %v, %v", fs, err)
	}
}

// eslint with the repository's own configuration: an unused variable an
// edit brings is a finding of that file and rule.
func TestCheckLint(t *testing.T) {
	ctx, d, dir := fixture(t, nodetest.Lint...)
	fs, err := d.Check(ctx, dir, []string{"lib/sum.js"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 0 {
		t.Fatalf("findings on the fixture: %+v", fs)
	}
	write(t, dir, map[string]string{"lib/sum.js": "function sum(xs) {\n  const unused = 1;\n  return xs.reduce((a, b) => a + b, 0);\n}\n\nmodule.exports = { sum };\n"})
	fs, err = d.Check(ctx, dir, []string{"lib/sum.js"})
	if err != nil {
		t.Fatal(err)
	}
	want := "eslint: lib/sum.js: no-unused-vars: 'unused' is assigned a value but never used."
	if len(fs) != 1 || fs[0].Key != want || !strings.HasPrefix(fs[0].Text, "eslint: lib/sum.js:2:9: no-unused-vars") {
		t.Fatalf("findings = %+v, want %q", fs, want)
	}
}
