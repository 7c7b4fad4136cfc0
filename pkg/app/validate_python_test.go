package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
)

// The shop: a Python project whose tests pytest runs. The blame commit kept
// the discount tiers sorted and made discount stop at the first that
// applies, and compared with > where the tiers mean "at least":
// test_volume_discount[at_threshold] and [second_tier] fail since.
const (
	shopPyproject = `[project]
name = "shop"
version = "0.1.0"
requires-python = ">=3.9"

[tool.pytest.ini_options]
testpaths = ["tests"]
`
	shopCart = `"""Shopping carts, totalled through a catalog."""


class Cart:
    """An ordered list of (sku, qty) lines."""

    def __init__(self):
        self.lines = []

    def add(self, sku, qty):
        """Append a line, merging it with an earlier line of the same sku."""
        for i, (s, q) in enumerate(self.lines):
            if s == sku:
                self.lines[i] = (s, q + qty)
                return
        self.lines.append((sku, qty))

    def total(self, catalog):
        """The cart's price in cents."""
        return sum(catalog.quote(sku, qty) for sku, qty in self.lines)
`
	shopPricingGood = `"""Quote orders from a catalog of unit prices."""

from dataclasses import dataclass


class UnknownSKU(KeyError):
    """A quote named a product the catalog does not sell."""


@dataclass
class Tier:
    """percent_off for orders of at least min_qty units."""

    min_qty: int
    percent_off: int


class Catalog:
    """Unit prices in cents, and volume discount tiers."""

    def __init__(self):
        self.prices = {}
        self.tiers = []

    def set_price(self, sku, cents):
        """Set the unit price of sku, in cents."""
        self.prices[sku] = cents

    def add_tier(self, tier):
        """Add a volume discount tier."""
        self.tiers.append(tier)

    def discount(self, qty):
        """The percentage off for an order of qty units."""
        best = 0
        for t in self.tiers:
            if qty >= t.min_qty and t.percent_off > best:
                best = t.percent_off
        return best

    def quote(self, sku, qty):
        """The price of qty units of sku, in cents, volume discount applied."""
        if sku not in self.prices:
            raise UnknownSKU(sku)
        if qty <= 0:
            raise ValueError(f"quote {sku}: quantity {qty} is not positive")
        total = self.prices[sku] * qty
        return total - total * self.discount(qty) // 100
`
	shopPricingBroken = `"""Quote orders from a catalog of unit prices."""

from dataclasses import dataclass


class UnknownSKU(KeyError):
    """A quote named a product the catalog does not sell."""


@dataclass
class Tier:
    """percent_off for orders of at least min_qty units."""

    min_qty: int
    percent_off: int


class Catalog:
    """Unit prices in cents, and volume discount tiers (largest minimum first)."""

    def __init__(self):
        self.prices = {}
        self.tiers = []

    def set_price(self, sku, cents):
        """Set the unit price of sku, in cents."""
        self.prices[sku] = cents

    def add_tier(self, tier):
        """Add a volume discount tier."""
        if not 0 <= tier.percent_off <= 100:
            raise ValueError(f"add tier: {tier.percent_off}% off is not a percentage")
        self.tiers.append(tier)
        self.tiers.sort(key=lambda t: t.min_qty, reverse=True)

    def discount(self, qty):
        """The percentage off for an order of qty units: the tier with the
        largest minimum that the order reaches."""
        for t in self.tiers:
            if qty > t.min_qty:
                return t.percent_off
        return 0

    def quote(self, sku, qty):
        """The price of qty units of sku, in cents, volume discount applied."""
        if sku not in self.prices:
            raise UnknownSKU(sku)
        if qty <= 0:
            raise ValueError(f"quote {sku}: quantity {qty} is not positive")
        total = self.prices[sku] * qty
        return total - total * self.discount(qty) // 100
`
	shopTestPricing = `import pytest

from shop.pricing import Catalog, UnknownSKU


def test_quote():
    c = Catalog()
    c.set_price("widget", 1000)
    assert c.quote("widget", 3) == 3000
    with pytest.raises(UnknownSKU):
        c.quote("gadget", 1)
    with pytest.raises(ValueError):
        c.quote("widget", 0)
`
	shopTestDiscount = `import pytest

from shop.pricing import Catalog, Tier


@pytest.fixture
def catalog():
    c = Catalog()
    c.set_price("widget", 1000)
    c.add_tier(Tier(min_qty=10, percent_off=5))
    c.add_tier(Tier(min_qty=50, percent_off=12))
    return c


@pytest.mark.parametrize(
    "qty, want",
    [
        (9, 9000),  # below every tier
        (10, 9500),  # at the threshold
        (20, 19000),  # above the first tier
        (50, 44000),  # at the second threshold
    ],
    ids=["below", "at_threshold", "above", "second_tier"],
)
def test_volume_discount(catalog, qty, want):
    assert catalog.quote("widget", qty) == want
`
	shopTestCart = `from shop.cart import Cart
from shop.pricing import Catalog


def test_total_merges_lines():
    cat = Catalog()
    cat.set_price("widget", 250)
    cat.set_price("bolt", 15)
    c = Cart()
    c.add("widget", 2)
    c.add("bolt", 4)
    c.add("widget", 1)
    assert c.lines == [("widget", 3), ("bolt", 4)]
    assert c.total(cat) == 810
`
	shopCount = `"""Counting what a cart holds."""


def units(cart):
    """The number of units across all lines."""
    return sum(qty for _, qty in cart.lines)
`
	shopTestCount = `from shop.cart import Cart
from shop.count import units


def test_units():
    c = Cart()
    c.add("widget", 2)
    c.add("bolt", 5)
    assert units(c) == 7
`
	// A test that has always failed: not the patch's.
	shopTestLegacy = `from shop.pricing import Catalog


def test_legacy_rounding():
    assert Catalog().prices == {"legacy": 1}, "legacy prices were never loaded"
`
)

// shopTest is the failing test the patches are validated against.
const shopTest = "tests/test_discount.py::test_volume_discount[at_threshold]"

// shopFix mends the comparison: the honest fix.
var shopFix = strings.Replace(shopPricingBroken, "if qty > t.min_qty:", "if qty >= t.min_qty:", 1)

// newShop is the shop's history: the working code, the blame commit, a
// README; HEAD fails shopTest.
func newShop(t *testing.T) ledger {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"pyproject.toml": shopPyproject, "shop/__init__.py": `"""A small shop."""` + "\n",
		"shop/pricing.py": shopPricingGood, "shop/cart.py": shopCart, "shop/count.py": shopCount,
		"tests/__init__.py": "", "tests/test_pricing.py": shopTestPricing, "tests/test_discount.py": shopTestDiscount,
		"tests/test_cart.py": shopTestCart, "tests/test_count.py": shopTestCount, "tests/test_legacy.py": shopTestLegacy,
	})
	if _, err := repo.CommitAll(ctx, "a shop: prices, discounts, carts"); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"shop/pricing.py": shopPricingBroken})
	blame, err := repo.CommitAll(ctx, "pricing: keep tiers sorted and stop at the first that applies")
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"README.md": "# shop\n"})
	if _, err := repo.CommitAll(ctx, "docs: a readme"); err != nil {
		t.Fatal(err)
	}
	return ledger{dir: dir, blame: blame}
}

func TestValidatePythonHonestFixPassesEveryGate(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	s := newShop(t)
	patch := writePatch(t, s.patchOf(t, map[string]string{"shop/pricing.py": shopFix}))
	v, gates, code := validate(t, "--repo", s.dir, "--patch", patch, "--test", shopTest, "--blame", s.blame)
	if code != 0 || !v.Accepted {
		t.Fatalf("exit %d, accepted %v, rejected by %v; want 0, accepted", code, v.Accepted, v.RejectedBy)
	}
	if len(v.AtBase) != 1 || !v.AtBase[0].Failing || v.AtBase[0].Test != shopTest || !strings.Contains(v.AtBase[0].Message, "10000") {
		t.Errorf("at base = %+v, want %s failing (10000 where 9500 was wanted)", v.AtBase, shopTest)
	}
	wantGate(t, gates, "integrity", task.GatePass, "1 file(s) changed, no test, build or CI file touched")
	wantGate(t, gates, "revert", task.GatePass, "not a revert of")
	wantGate(t, gates, "static", task.GatePass, "compile and pyflakes on shop/pricing.py")
	wantGate(t, gates, "oracle", task.GatePass, "3/3 runs passed for each of "+shopTest+" (pytest, 3 runs)")
	// The failing test's module first, then the test modules that import
	// the changed one; test_count imports none of it.
	wantGate(t, gates, "regression", task.GatePass,
		"pytest tests/test_discount.py and 3 test module(s) importing the changed ones: tests/test_cart.py tests/test_legacy.py tests/test_pricing.py",
		"no new failure", "failing at base "+task.Short(v.Base)+" too, not blamed: tests/test_legacy.py::test_legacy_rounding")
	if strings.Contains(gates["regression"].Detail, "test_count") {
		t.Errorf("regression ran test_count.py, which imports nothing that changed: %s", gates["regression"].Detail)
	}
}

// Each cheat on the shop is caught by `worker validate`, and by the gate
// whose job it is.
func TestValidatePythonCatchesCheats(t *testing.T) {
	t.Parallel()
	pythontest.Require(t)
	allowTests := filepath.Join(t.TempDir(), "allow-tests.yaml")
	if err := os.WriteFile(allowTests, []byte("validators:\n  allow_test_edits: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testDef := "def test_volume_discount(catalog, qty, want):\n"
	assertion := `    assert catalog.quote("widget", qty) == want` + "\n"
	discount := "        for t in self.tiers:\n            if qty > t.min_qty:\n"
	for _, c := range []struct {
		name   string
		config string
		change map[string]string
		gate   string
		detail []string
	}{
		{
			name:   "skip mark",
			config: allowTests,
			change: map[string]string{"tests/test_discount.py": strings.Replace(shopTestDiscount, "@pytest.mark.parametrize(", "@pytest.mark.skip(reason=\"flaky\")\n@pytest.mark.parametrize(", 1)},
			gate:   "integrity", detail: []string{`tests/test_discount.py:15: adds a skip: @pytest.mark.skip(reason="flaky")`},
		},
		{
			name:   "xfail mark",
			config: allowTests,
			change: map[string]string{"tests/test_discount.py": strings.Replace(shopTestDiscount, "@pytest.mark.parametrize(", "@pytest.mark.xfail\n@pytest.mark.parametrize(", 1)},
			gate:   "integrity", detail: []string{"adds a skip: @pytest.mark.xfail"},
		},
		{
			name:   "pytest.skip()",
			config: allowTests,
			change: map[string]string{"tests/test_discount.py": strings.Replace(shopTestDiscount, testDef, testDef+"    if qty == 10:\n        pytest.skip(\"tiers are being reworked\")\n", 1)},
			gate:   "integrity", detail: []string{`adds a skip: pytest.skip("tiers are being reworked")`},
		},
		{
			name:   "edited assertion",
			config: allowTests,
			change: map[string]string{"tests/test_discount.py": strings.Replace(shopTestDiscount, assertion, `    assert catalog.quote("widget", qty) in (want, qty * 1000)`+"\n", 1)},
			gate:   "integrity", detail: []string{`tests/test_discount.py:26: removes an assertion: assert catalog.quote("widget", qty) == want`},
		},
		{
			name:   "deleted test",
			config: allowTests,
			change: map[string]string{"tests/test_discount.py": shopTestDiscount[:strings.Index(shopTestDiscount, "@pytest.mark.parametrize(")]},
			gate:   "integrity", detail: []string{"tests/test_discount.py:25: deletes test test_volume_discount"},
		},
		{
			name:   "test edit without the policy",
			change: map[string]string{"tests/test_discount.py": strings.Replace(shopTestDiscount, "(10, 9500)", "(10, 10000)", 1)},
			gate:   "integrity", detail: []string{"tests/test_discount.py: edits test file (test edits are not allowed for this repository)"},
		},
		{
			// A hook that reports every test as passed.
			name:   "conftest change",
			config: allowTests,
			change: map[string]string{"tests/conftest.py": "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = \"passed\"\n"},
			gate:   "integrity", detail: []string{"tests/conftest.py: adds pytest's conftest.py"},
		},
		{
			name: "special-cased literal",
			change: map[string]string{"shop/pricing.py": strings.Replace(shopPricingBroken, discount,
				"        if qty == 10:\n            return 5\n"+discount, 1)},
			gate: "integrity", detail: []string{"shop/pricing.py:39: special-cases a value of the failing test: qty == 10 compares with 10, which test_volume_discount uses at tests/test_discount.py:"},
		},
		{
			name: "detection through PYTEST_CURRENT_TEST",
			change: map[string]string{"shop/pricing.py": strings.Replace(strings.Replace(shopPricingBroken, "from dataclasses import dataclass\n", "import os\nfrom dataclasses import dataclass\n", 1),
				discount, "        if \"PYTEST_CURRENT_TEST\" in os.environ:\n            return self.tiers[-1].percent_off if qty < 50 else self.tiers[0].percent_off\n"+discount, 1)},
			gate: "integrity", detail: []string{`shop/pricing.py:40: detects that it runs under test by pytest's environment variables (PYTEST_CURRENT_TEST, PYTEST_…): if "PYTEST_CURRENT_TEST" in os.environ:`},
		},
		{
			name: "detection through sys.modules",
			change: map[string]string{"shop/pricing.py": strings.Replace(strings.Replace(shopPricingBroken, "from dataclasses import dataclass\n", "import sys\nfrom dataclasses import dataclass\n", 1),
				discount, "        if \"pytest\" in sys.modules:\n            return 5\n"+discount, 1)},
			gate: "integrity", detail: []string{`detects that it runs under test by looking for pytest or unittest among the loaded modules (sys.modules): if "pytest" in sys.modules:`},
		},
		{
			name:   "blame commit fully reverted",
			change: map[string]string{"shop/pricing.py": shopPricingGood},
			gate:   "revert", detail: []string{"reverts ", "undoes every change it made to the code", `"pricing: keep tiers sorted and stop at the first that applies"`},
		},
		{
			name:   "does not compile",
			change: map[string]string{"shop/pricing.py": strings.Replace(shopFix, "        return 0\n", "        return 0 +\n", 1)},
			gate:   "static", detail: []string{"compile: shop/pricing.py"},
		},
		{
			// The fix, and a merge of cart lines broken: test_cart, which
			// imports cart, fails; test_count, which imports it too, passes.
			name:   "breaks a test of a module importing the changed one",
			change: map[string]string{"shop/pricing.py": shopFix, "shop/cart.py": strings.Replace(shopCart, "(s, q + qty)", "(s, qty)", 1)},
			gate:   "regression", detail: []string{"1 new failure(s)", "tests/test_cart.py::test_total_merges_lines: ", "tests/test_count.py"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newShop(t)
			args := []string{"--repo", s.dir, "--patch", writePatch(t, s.patchOf(t, c.change)), "--test", shopTest, "--blame", s.blame}
			if c.config != "" {
				args = append(args, "--config", c.config)
			}
			v, gates, code := validate(t, args...)
			if code != 1 || v.Accepted {
				t.Fatalf("exit %d, accepted %v; want 1, rejected", code, v.Accepted)
			}
			if len(v.RejectedBy) == 0 || v.RejectedBy[0] != c.gate {
				t.Errorf("rejected by %v, want %s first", v.RejectedBy, c.gate)
			}
			wantGate(t, gates, c.gate, task.GateFail, c.detail...)
		})
	}
}

// A clone no driver knows is a usage error that says so, before any test
// runs.
func TestValidateRepositoryWithoutLanguage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"README.md": "# notes\n"})
	if _, err := repo.CommitAll(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	l := ledger{dir: dir}
	patch := writePatch(t, l.patchOf(t, map[string]string{"README.md": "# notes\n\nmore\n"}))
	var stdout, stderr bytes.Buffer
	err = validateCommand(ctx, []string{"--repo", dir, "--patch", patch, "--test", "test_x"}, noEnv, &stdout, &stderr)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "no language driver knows how to run this repository's tests") {
		t.Errorf("exit %d, %v; want 2 naming the missing driver", ExitCode(err), err)
	}
}
