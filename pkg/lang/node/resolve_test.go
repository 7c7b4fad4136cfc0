package node

import (
	"errors"
	"testing"

	"github.com/redfix/redfix/pkg/testrun"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"package.json": `{"devDependencies":{"jest":"30.5.2"}}`,
		"src/cart.test.js": `describe('cart', () => {
  test('totals the items', () => {});
  describe('tax', () => {
    it('adds the rate', () => {});
  });
});
`,
		"src/other/cart.test.js": "test('alone', () => {});\ntest('adds the rate', () => {});\n",
		"test/price.test.ts":     "describe('price', () => { it('applies the discount', () => {}); });\n",
		"src/cart.js":            "module.exports = {};\n",
		"test/y.test.js":         "describe('y', () => { it('applies the discount', () => {}); });\n",
	})
	for _, c := range []struct{ id, want string }{
		{"src/cart.test.js::cart > totals the items", "src/cart.test.js::cart > totals the items"},
		{"other/cart.test.js::alone", "src/other/cart.test.js::alone"},
		{"src/cart.test.js", "src/cart.test.js"},
		{"src", "src"},
		{".", "."},
		{"cart > tax > adds the rate", "src/cart.test.js::cart > tax > adds the rate"},
		// jest-junit's default dialect: the suite, a dot, the names
		// joined by spaces.
		{"cart.cart totals the items", "src/cart.test.js::cart > totals the items"},
		{"cart tax adds the rate", "src/cart.test.js::cart > tax > adds the rate"},
		// node:test's JUnit: a classname and the title.
		{"test.price applies the discount", "test/price.test.ts::price > applies the discount"},
		// A full name before a title.
		{"adds the rate", "src/other/cart.test.js::adds the rate"},
		{"alone", "src/other/cart.test.js::alone"},
	} {
		got, err := Driver{}.Resolve(dir, c.id)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.id, err)
			continue
		}
		if got.ID != c.want {
			t.Errorf("Resolve(%q) = %q, want %q", c.id, got.ID, c.want)
		}
	}
	if got, _ := (Driver{}).Resolve(dir, "src/cart.test.js::cart > totals the items"); got.ImportPath != "src/cart.test.js" || got.Test != "cart > totals the items" || got.IsPackage() {
		t.Errorf("target = %+v", got)
	}
	for _, c := range []struct {
		id   string
		want error
	}{
		{"applies the discount", testrun.ErrAmbiguous},
		{"cart.test.js::alone", testrun.ErrAmbiguous},
		{"no such test", testrun.ErrNotFound},
		{"src/gone.test.js::x", testrun.ErrNotFound},
		{"../outside.test.js", testrun.ErrNotFound},
		{"", testrun.ErrNotFound},
	} {
		if _, err := (Driver{}).Resolve(dir, c.id); !errors.Is(err, c.want) {
			t.Errorf("Resolve(%q) = %v, want %v", c.id, err, c.want)
		}
	}
}
