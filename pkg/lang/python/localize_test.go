package python

import (
	"errors"
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/testrun"
)

// The line only the failing test runs ranks first.
func TestLocalizeRanksTheBuggyLineFirst(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, map[string]string{
		"pricing.py": `def gross(net, taxed):
    if taxed:
        return net * 1.2
    if net > 100:
        return net - 10
    return net


def label(x):
    return "EUR %.2f" % x
`,
		"tests/test_pricing.py": `import pytest

from pricing import gross, label


def test_taxed():
    assert gross(10, True) == 12


@pytest.mark.parametrize("net", [1, 50])
def test_untaxed(net):
    assert gross(net, False) == net


def test_big_untaxed():
    assert gross(200, False) == 200


def test_label():
    assert label(1) == "EUR 1.00"
`,
		"tests/test_label.py": "from pricing import label\n\n\ndef test_label_zero():\n    assert label(0) == \"EUR 0.00\"\n",
	})
	sp, err := d.Localize(ctx, dir, []string{"test_big_untaxed"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	// The other tests of the directory pass around it: those of its file
	// first.
	wantPassing := []string{"tests/test_label.py::test_label_zero", "tests/test_pricing.py::test_label", "tests/test_pricing.py::test_taxed",
		"tests/test_pricing.py::test_untaxed[1]", "tests/test_pricing.py::test_untaxed[50]"}
	if !slices.Equal(sp.Failing, []string{"tests/test_pricing.py::test_big_untaxed"}) || !slices.Equal(sorted(sp.Passing), wantPassing) {
		t.Errorf("failing %q, passing %q", sp.Failing, sp.Passing)
	}
	if _, err := d.Localize(ctx, dir, []string{"tests/test_pricing.py::test_gone"}, 5); !errors.Is(err, testrun.ErrNotFound) {
		t.Errorf("Localize of a test pytest does not collect: %v", err)
	}
	if len(sp.Suspects) == 0 {
		t.Fatal("no suspects")
	}
	top := sp.Suspects[0]
	if top.File != "pricing.py" || top.Line != 5 || top.Score != 1 || top.Passing != 0 {
		t.Errorf("top suspect = %+v (all %+v)", top, sp.Suspects)
	}
	for _, s := range sp.Suspects {
		if d.IsTestFile(s.File) {
			t.Errorf("a test file's line is ranked: %+v", s)
		}
	}
}
