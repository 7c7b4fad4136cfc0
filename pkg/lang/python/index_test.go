package python

import (
	"testing"

	"github.com/redfix/redfix/pkg/codeindex"
)

func TestIndexFindsClassesFunctionsAndMethods(t *testing.T) {
	t.Parallel()
	dir := repo(t, map[string]string{
		"shop/cart.py": `import functools

TAX = 0.2


class Cart(Base):
    """A cart."""

    def __init__(self):
        self.items = []

    @functools.cache
    def total(self, *,
              discount: float = 0) -> float:  # the sum
        def helper():
            return 1
        return sum(self.items)

    class Line:
        def price(self):
            return 0


async def checkout(cart: "Cart") -> bool:
    return True


if True:
    def conditional():
        pass
`,
		"tests/test_cart.py":   "def test_total():\n    pass\n",
		".venv/lib/site.py":    "def hidden():\n    pass\n",
		"venv/lib/site.py":     "def hidden():\n    pass\n",
		"pkg/__pycache__/x.py": "def hidden():\n    pass\n",
	})
	ix, err := Driver{}.Index(dir)
	if err != nil {
		t.Fatal(err)
	}
	cart := ix.FindTypes("Cart")
	if len(cart) != 1 || cart[0].Kind != codeindex.KindStruct || cart[0].File != "shop/cart.py" || cart[0].Line != 6 || cart[0].EndLine != 21 || cart[0].Signature != "class Cart(Base)" {
		t.Errorf("Cart = %+v", cart)
	}
	total := ix.FindMethod("Cart", "total")
	if len(total) != 1 || total[0].Kind != codeindex.KindMethod || total[0].Receiver != "Cart" || total[0].Line != 12 || total[0].EndLine != 17 ||
		total[0].Signature != "def total(self, *, discount: float = 0) -> float" {
		t.Errorf("Cart.total = %+v", total)
	}
	if ms := ix.MethodsOf("Cart"); len(ms) != 2 {
		t.Errorf("Cart's methods = %+v", ms)
	}
	if line := ix.FindMethod("Line", "price"); len(line) != 1 || line[0].Receiver != "Line" {
		t.Errorf("Cart.Line.price = %+v", line)
	}
	co := ix.FindFuncs("checkout")
	if len(co) != 1 || co[0].Kind != codeindex.KindFunc || co[0].Signature != `async def checkout(cart: "Cart") -> bool` {
		t.Errorf("checkout = %+v", co)
	}
	if c := ix.FindFuncs("conditional"); len(c) != 1 {
		t.Errorf("a function defined under if = %+v", c)
	}
	if h := ix.FindFuncs("helper"); len(h) != 0 {
		t.Errorf("a function inside a function is indexed: %+v", h)
	}
	if h := ix.FindFuncs("hidden"); len(h) != 0 {
		t.Errorf("virtual environments or caches are indexed: %+v", h)
	}
	if tt := ix.FindFuncs("test_total"); len(tt) != 1 || tt[0].File != "tests/test_cart.py" {
		t.Errorf("test_total = %+v", tt)
	}
}

// A file that does not parse is indexed as far as the parser recovers.
func TestIndexKeepsWhatABrokenFileDeclares(t *testing.T) {
	t.Parallel()
	defs := parseDefs([]byte("def good():\n    pass\n\n\ndef bad(:\n    pass\n\n\nclass After:\n    pass\n"))
	names := map[string]bool{}
	for _, d := range defs {
		names[d.name] = true
	}
	if !names["good"] || !names["After"] {
		t.Errorf("defs of a broken file = %+v", defs)
	}
}
