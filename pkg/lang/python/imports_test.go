package python

import (
	"slices"
	"strings"
	"testing"
)

func TestPyImports(t *testing.T) {
	t.Parallel()
	src := `import os, shop.cart as cart
from . import util
from .pricing import Catalog
from ..core import (
    engine,
)
try:
    from shop.extra import thing
except ImportError:
    pass


def late():
    import json
`
	got := imports("shop/sub/mod.py", []byte(src))
	for _, want := range []string{"os", "shop", "shop.cart", "shop.sub", "shop.sub.util", "shop.sub.pricing", "shop.sub.pricing.Catalog", "shop.core", "shop.core.engine", "shop.extra.thing", "json"} {
		if !slices.Contains(got, want) {
			t.Errorf("imports of shop/sub/mod.py = %v: no %s", got, want)
		}
	}
	if got := imports("pkg/__init__.py", []byte("from .a import b\n")); !slices.Contains(got, "pkg.a") {
		t.Errorf("a package's relative import: %v, want pkg.a", got)
	}
}

func TestPyImportersNearestFirst(t *testing.T) {
	t.Parallel()
	mods := []module{
		{rel: "src/shop/pricing.py", dotted: "src.shop.pricing"},
		{rel: "src/shop/cart.py", dotted: "src.shop.cart", imports: []string{"shop", "shop.pricing"}},
		{rel: "src/shop/count.py", dotted: "src.shop.count", imports: []string{"shop", "shop.cart"}},
		{rel: "tests/test_pricing.py", dotted: "tests.test_pricing", imports: []string{"shop", "shop.pricing"}},
		{rel: "tests/test_count.py", dotted: "tests.test_count", imports: []string{"shop", "shop.count"}},
		{rel: "tests/test_cart.py", dotted: "tests.test_cart", imports: []string{"shop", "shop.cart", "helpers"}},
		{rel: "tests/helpers.py", dotted: "tests.helpers", imports: []string{"shop", "shop.pricing"}},
		{rel: "tests/test_other.py", dotted: "tests.test_other", imports: []string{"os"}},
		{rel: "tests/test_failing.py", dotted: "tests.test_failing", imports: []string{"shop.pricing"}},
	}
	got := importers(mods, []string{"src/shop/pricing.py"}, map[string]bool{"tests/test_failing.py": true})
	var names []string
	for _, d := range got {
		names = append(names, d.Dir)
		if d.Via != "src/shop/pricing.py" {
			t.Errorf("%s reached via %s", d.Dir, d.Via)
		}
	}
	if want := "tests/test_pricing.py tests/test_cart.py tests/test_count.py"; strings.Join(names, " ") != want {
		t.Errorf("importers = %v, want %s (nearest first; the skipped and the unrelated left out)", names, want)
	}
}
