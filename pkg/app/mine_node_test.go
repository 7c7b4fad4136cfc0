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
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// nodeFixHistory is a JavaScript package tested with node:test whose
// second commit fixes a bug and adds the test that shows it; its third
// changes only the README.
var nodeFixHistory = []map[string]string{
	{
		"package.json":       `{"name": "shop", "version": "0.1.0", "private": true, "scripts": {"test": "node --test"}}` + "\n",
		"src/price.js":       "// n items at unit cents, 10% off from 10 items.\nfunction total(n, unit) {\n  let t = n * unit;\n  if (n > 10) {\n    t -= Math.floor(t / 10);\n  }\n  return t;\n}\n\nmodule.exports = { total };\n",
		"test/small.test.js": "const { test } = require(\"node:test\");\nconst assert = require(\"node:assert\");\nconst { total } = require(\"../src/price\");\n\ntest(\"small orders pay full price\", () => {\n  assert.strictEqual(total(2, 100), 200);\n});\n",
	},
	{
		"src/price.js":          "// n items at unit cents, 10% off from 10 items.\nfunction total(n, unit) {\n  let t = n * unit;\n  if (n >= 10) {\n    t -= Math.floor(t / 10);\n  }\n  return t;\n}\n\nmodule.exports = { total };\n",
		"test/discount.test.js": "const { describe, test } = require(\"node:test\");\nconst assert = require(\"node:assert\");\nconst { total } = require(\"../src/price\");\n\ndescribe(\"discount\", () => {\n  test(\"starts at ten items\", () => {\n    assert.strictEqual(total(10, 100), 900);\n  });\n});\n",
	},
	{
		"README.md": "# shop\n",
	},
}

// worker mine on a JavaScript repository: the wiring's drivers find it is
// Node's, its fix's test (run with node:test at the fix and at its parent)
// is the task, named FILE::describe > title, and a commit that changes no
// JavaScript is skipped for that reason.
func TestMineCommandNode(t *testing.T) {
	clearEnv(t)
	nodetest.Require(t)
	t.Setenv("REDFIX_DATA_DIR", t.TempDir())
	t.Setenv("REDFIX_NODE_CACHE_DIR", nodetest.CacheDir(t))
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
	for i, files := range nodeFixHistory {
		for name, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := r.CommitAll(ctx, []string{"start", "Discount from 10 items, as documented", "docs: a readme"}[i])
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
	}
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	var stdout, stderr bytes.Buffer
	// Three runs of each test in each direction rather than ten, as
	// minedFixTasks mines.
	if err := Mine(ctx, []string{"--repo", dir, "--out", out, "--flake-error", "0.2"}, &stdout, &stderr); err != nil {
		t.Fatalf("mine: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"3 commits on the first-parent line", "1 qualified", "no-node-change"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	tasks, err := bench.ReadTasksFile(out)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %+v, %v\n%s", tasks, err, stdout.String())
	}
	if tk := tasks[0]; strings.Join(tk.Tests, ",") != "test/discount.test.js::discount > starts at ten items" || tk.Fix != shas[1] {
		t.Errorf("task: %+v", tk)
	}
}
