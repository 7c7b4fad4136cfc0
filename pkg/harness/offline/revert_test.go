package offline

import "testing"

// A line's declaration is read in the language of its file, by the
// dialect its driver gives.
func TestDeclaredFunc(t *testing.T) {
	for _, tc := range []struct{ path, line, want string }{
		{"calc/cart.go", "func (c *Cart) Total() int {", "Total"},
		{"calc/cart.go", "func Add(a, b int) int {", "Add"},
		{"calc/cart.go", "\treturn add(a, b)", ""},
		{"shop/cart.py", "    async def fetch(self, x):", "fetch"},
		{"shop/cart.py", "class Cart:", "Cart"},
		{"shop/cart.py", "    function of the cart", ""},
		{"src/price.ts", "export default async function quote(qty: number) {", "quote"},
		{"src/price.ts", "class Catalog {", "Catalog"},
		{"src/price.ts", "def x", ""},
		{"notes.txt", "func Add(a, b int) int {", ""},
	} {
		if got := declaredFunc(testLangs.of(tc.path), tc.line); got != tc.want {
			t.Errorf("declaredFunc(%s, %q) = %q, want %q", tc.path, tc.line, got, tc.want)
		}
	}
}
