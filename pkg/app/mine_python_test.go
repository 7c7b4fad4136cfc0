package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/bench"
	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
)

// pyFixHistory is a Python package whose second commit fixes a bug and
// adds the pytest test that shows it.
var pyFixHistory = []map[string]string{
	{
		"pyproject.toml":      "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n",
		"shop/__init__.py":    "",
		"shop/price.py":       "def total(n, unit):\n    \"\"\"n items at unit cents, 10% off from 10 items.\"\"\"\n    t = n * unit\n    if n > 10:\n        t -= t // 10\n    return t\n",
		"tests/__init__.py":   "",
		"tests/test_small.py": "from shop.price import total\n\n\ndef test_small():\n    assert total(2, 100) == 200\n",
	},
	{
		"shop/price.py":          "def total(n, unit):\n    \"\"\"n items at unit cents, 10% off from 10 items.\"\"\"\n    t = n * unit\n    if n >= 10:\n        t -= t // 10\n    return t\n",
		"tests/test_discount.py": "from shop.price import total\n\n\ndef test_discount_at_ten():\n    assert total(10, 100) == 900\n",
	},
}

// worker mine on a Python repository: the wiring's drivers find it is
// Python, and its fix's pytest test is the task, named by its node id.
func TestMineCommandPython(t *testing.T) {
	clearEnv(t)
	pythontest.Require(t)
	t.Setenv("REDFIX_DATA_DIR", t.TempDir())
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for i, files := range pyFixHistory {
		for name, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := r.CommitAll(ctx, []string{"start", "Discount from 10 items, as documented"}[i])
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
	}
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	var stdout, stderr bytes.Buffer
	if err := Mine(ctx, []string{"--repo", dir, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("mine: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if want := "2 commits on the first-parent line; 1 run with tests; 1 qualified"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
	}
	tasks, err := bench.ReadTasksFile(out)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %+v, %v", tasks, err)
	}
	if tk := tasks[0]; strings.Join(tk.Tests, ",") != "tests/test_discount.py::test_discount_at_ten" || tk.Fix != shas[1] {
		t.Errorf("task: %+v", tk)
	}
}
