package judge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/task"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The judge's context for Python, through the driver's parser: the failing
// test's function (once for its parameters), the fixtures of its file it
// takes, the data file it names, and the changed method before and after.
func TestWithContextInPython(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"pyproject.toml":   "[project]\nname = \"shop\"\n",
		"shop/__init__.py": "",
		"shop/pricing.py": "class Catalog:\n    def __init__(self):\n        self.tiers = []\n\n" +
			"    def discount(self, qty):\n        for t in self.tiers:\n            if qty >= t.min_qty:\n                return t.percent_off\n        return 0\n\n" +
			"    def quote(self, sku, qty):\n        return qty\n",
		"tests/test_discount.py": "import pytest\n\nfrom shop.pricing import Catalog\n\n\n@pytest.fixture\ndef catalog():\n    return Catalog()\n\n\n" +
			"def unrelated():\n    pass\n\n\n" +
			"@pytest.mark.parametrize(\"qty\", [10, 50])\ndef test_volume_discount(catalog, qty):\n    want = open(\"tiers.txt\").read()\n    assert catalog.discount(qty) == int(want)\n\n\n" +
			"class TestQuote:\n    def test_one(self, catalog):\n        assert catalog.quote(\"w\", 1) == 1\n",
		"tests/tiers.txt": "5\n",
	})
	patch := "--- a/shop/pricing.py\n+++ b/shop/pricing.py\n@@ -5,5 +5,5 @@ class Catalog:\n     def discount(self, qty):\n         for t in self.tiers:\n-            if qty > t.min_qty:\n+            if qty >= t.min_qty:\n                 return t.percent_off\n         return 0\n"
	in := judge.WithContext(dir, python.Driver{}, judge.Input{
		Task: task.Task{Failures: []task.Failure{
			{Package: "tests/test_discount.py", Test: "test_volume_discount[10]"},
			{Package: "tests/test_discount.py", Test: "test_volume_discount[50]"},
			{Package: "tests/test_discount.py", Test: "TestQuote::test_one"},
		}},
		Patch: patch,
	})
	if len(in.Tests) != 3 {
		t.Fatalf("tests = %+v, want the function once, its data file, and the method", in.Tests)
	}
	first := in.Tests[0]
	if first.Name != "test_volume_discount (tests/test_discount.py:15)" ||
		!strings.HasPrefix(first.Text, "@pytest.mark.parametrize(\"qty\", [10, 50])\ndef test_volume_discount(catalog, qty):") ||
		!strings.Contains(first.Text, "@pytest.fixture\ndef catalog():\n    return Catalog()") || strings.Contains(first.Text, "unrelated") {
		t.Errorf("test source = %+v", first)
	}
	if in.Tests[1].Name != "tests/tiers.txt" || in.Tests[1].Text != "5\n" {
		t.Errorf("data file = %+v", in.Tests[1])
	}
	if in.Tests[2].Name != "TestQuote.test_one (tests/test_discount.py:22)" || !strings.Contains(in.Tests[2].Text, "catalog.quote") {
		t.Errorf("method source = %+v", in.Tests[2])
	}
	if len(in.Code) != 1 || in.Code[0].Where != "shop/pricing.py: method Catalog.discount" ||
		!strings.Contains(in.Code[0].Before, "if qty > t.min_qty:") || !strings.Contains(in.Code[0].After, "if qty >= t.min_qty:") ||
		strings.Contains(in.Code[0].After, "def quote") {
		t.Errorf("code = %+v", in.Code)
	}
}

// Through the Go driver, a test is quoted as go/ast reads it and a change
// by its top-level declaration.
func TestWithContextInGo(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.22\n",
		"m/m.go":         "package m\n\nfunc Pad(n int) bool {\n\treturn n < 10\n}\n",
		"m/m_test.go":    "package m\n\nimport \"testing\"\n\nfunc TestPad(t *testing.T) {\n\tif !Pad(9) {\n\t\tt.Fatal(9)\n\t}\n}\n",
		"m/testdata/x.y": "x",
	})
	patch := "--- a/m/m.go\n+++ b/m/m.go\n@@ -3,3 +3,3 @@ package m\n func Pad(n int) bool {\n-\treturn n <= 10\n+\treturn n < 10\n }\n"
	in := judge.Input{Task: task.Task{Failures: []task.Failure{{Package: "example.com/m/m", Test: "TestPad"}}}, Patch: patch}
	got := judge.WithContext(dir, golang.Driver{}, in)
	if len(got.Tests) != 1 || got.Tests[0].Name != "TestPad (m/m_test.go:5)" || !strings.HasPrefix(got.Tests[0].Text, "func TestPad(") {
		t.Errorf("tests = %+v", got.Tests)
	}
	if len(got.Code) != 1 || got.Code[0].Where != "m/m.go: func Pad" || !strings.Contains(got.Code[0].Before, "n <= 10") || !strings.Contains(got.Code[0].After, "n < 10") {
		t.Errorf("code = %+v", got.Code)
	}
}
