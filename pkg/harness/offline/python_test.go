package offline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/task"
)

// pyShop is a Python repository with a volume discount; pyBroken is the
// commit that breaks it (an order of exactly a tier's minimum no longer
// gets the tier) while it reorders the code around it.
var pyShop = map[string]string{
	"pyproject.toml":    "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
	"shop/__init__.py":  "",
	"tests/__init__.py": "",
	"shop/pricing.py": `"""Quote orders from a catalog of unit prices."""

from dataclasses import dataclass


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
        self.prices[sku] = cents

    def add_tier(self, tier):
        self.tiers.append(tier)

    def discount(self, qty):
        best = 0
        for t in self.tiers:
            if qty >= t.min_qty and t.percent_off > best:
                best = t.percent_off
        return best

    def quote(self, sku, qty):
        if qty <= 0:
            raise ValueError(f"quote {sku}: quantity {qty} is not positive")
        total = self.prices[sku] * qty
        return total - total * self.discount(qty) // 100
`,
	"tests/test_discount.py": `import pytest

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
    [(9, 9000), (10, 9500), (20, 19000), (50, 44000)],
    ids=["below", "at_threshold", "above", "second_tier"],
)
def test_volume_discount(catalog, qty, want):
    assert catalog.quote("widget", qty) == want


def test_rejects_nothing_ordered(catalog):
    with pytest.raises(ValueError):
        catalog.quote("widget", 0)
`,
}

const pyBrokenDiscount = `    def add_tier(self, tier):
        """Add a tier; the largest minimum comes first."""
        if not 0 <= tier.percent_off <= 100:
            raise ValueError(f"add tier: {tier.percent_off}% off is not a percentage")
        self.tiers.append(tier)
        self.tiers.sort(key=lambda t: t.min_qty, reverse=True)

    def discount(self, qty):
        for t in self.tiers:
            if qty > t.min_qty:
                return t.percent_off
        return 0
`

// pyRepo writes the repository's two commits and returns it with the
// commits' hashes.
func pyRepo(t *testing.T, ctx context.Context) (dir, good, bad string) {
	t.Helper()
	pythontest.Require(t)
	dir = t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(files map[string]string) {
		for rel, text := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(pyShop)
	if good, err = repo.CommitAll(ctx, "pricing: volume discounts"); err != nil {
		t.Fatal(err)
	}
	src := pyShop["shop/pricing.py"]
	from := strings.Index(src, "    def add_tier")
	to := strings.Index(src, "    def quote")
	write(map[string]string{"shop/pricing.py": src[:from] + pyBrokenDiscount + "\n" + src[to:]})
	if bad, err = repo.CommitAll(ctx, "pricing: keep tiers sorted and stop at the first that applies"); err != nil {
		t.Fatal(err)
	}
	return dir, good, bad
}

// The offline policy repairs a Python repository through the production
// loop, the real tools and the Python driver (real pytest): with the blame
// commit's diff to work from, and without it, from coverage alone, where
// only the templates on Python's tokens can find the fix.
func TestRepairPython(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pytest in real repositories")
	}
	for _, blamed := range []bool{true, false} {
		name := "localized"
		if blamed {
			name = "blamed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			dir, good, bad := pyRepo(t, ctx)
			drv := python.Driver{Timeout: 2 * time.Minute}
			const failing = "tests/test_discount.py::test_volume_discount[at_threshold]"
			var bis task.Bisection
			if blamed {
				bis = task.Bisection{Good: good, Bad: bad, Blame: bad, Subject: "pricing: keep tiers sorted", Steps: 1}
			}
			tk := failingTask(t, ctx, drv, dir, bad, failing, "task-py", bis)
			res, ws := repairOffline(t, ctx, drv, tk, maxSteps)
			if res.Stop != harness.StopExit || !res.TestsPassed {
				t.Fatalf("stop=%s passed=%v", res.Stop, res.TestsPassed)
			}
			if !strings.Contains(res.Patch, "+            if qty >= t.min_qty:") {
				t.Errorf("the patch is not the boundary's fix:\n%s", res.Patch)
			}
			if strings.Contains(res.Patch, "tests/") {
				t.Errorf("the patch edits a test:\n%s", res.Patch)
			}
			// The whole test file passes on the patched workspace.
			all, err := drv.RunPackages(ctx, ws.Dir, []string{"tests/test_discount.py"})
			if err != nil {
				t.Fatal(err)
			}
			if !all.OK() || len(all.Passed) != 5 {
				t.Errorf("after the patch: %s\n%s", all.Summary(), all.Output)
			}
		})
	}
}
