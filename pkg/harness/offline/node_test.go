package offline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/harness"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/task"
)

// nodeRepair is a JavaScript or TypeScript repository's history whose
// commit blame breaks failing; fixed is a line the fix has.
type nodeRepair struct {
	name    string
	history []string // txtar archives, one a commit
	blame   int      // the commit that breaks failing; 0: no bisection to go on
	failing string
	fixed   string
	file    string // the test file the repaired code must pass whole
}

// tsBoundary is testdata/node/01-ts-boundary as a history on the price
// fixture project (its pinned vitest and lockfile): a comparison made
// exclusive inside a larger TypeScript change.
func tsBoundary(t *testing.T) nodeRepair {
	t.Helper()
	sc := loadScenario(t, filepath.Join("testdata", "node", "01-ts-boundary.txtar"))
	base := txtar.Parse([]byte(nodetest.Project("price", "shop: prices and a catalog")))
	var history []string
	for i, files := range sc.commits {
		ar := &txtar.Archive{Comment: []byte("shop: stage " + string(rune('0'+i)) + "\n\n")}
		if i == 0 {
			ar = base
		}
		for _, f := range files {
			if f.Name != "package.json" { // the fixture's, with its pinned runner
				ar.Files = append(ar.Files, f)
			}
		}
		history = append(history, string(txtar.Format(ar)))
	}
	return nodeRepair{name: "ts-boundary", history: history, blame: 1, failing: sc.failing,
		fixed: "+      if (qty >= t.minQty) {", file: "src/pricing.test.ts"}
}

// The offline policy repairs JavaScript and TypeScript repositories through
// the production loop, the real tools and the Node driver (real vitest and
// jest, in the sandbox): a comparison made exclusive in a TypeScript method
// (vitest), and a slice's bound one off in a CommonJS module (jest), each
// inside a commit that does more; the slice's bound also without the blame
// commit, from the failing test's calls found through the driver's index.
func TestRepairNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs vitest and jest in real repositories")
	}
	nodetest.Require(t)
	cases := []nodeRepair{
		tsBoundary(t),
		{name: "js-slice-bound", history: nodetest.Cart, blame: nodetest.CartBroken, failing: nodetest.CartTest,
			fixed: "+  for (const item of items.slice(0)) {", file: "src/cart.test.js"},
		{name: "js-slice-bound-unblamed", history: nodetest.Cart, failing: nodetest.CartTest,
			fixed: "+  for (const item of items.slice(0)) {", file: "src/cart.test.js"},
	}
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			dir, commits := nodetest.History(t, rc.history...)
			ctx, cancel := context.WithTimeout(nodetest.Confined(t, "o/"+rc.name), 8*time.Minute)
			defer cancel()
			drv := node.Driver{CacheDir: nodetest.CacheDir(t), Timeout: 2 * time.Minute}
			head := commits[len(commits)-1]
			var bis task.Bisection
			if rc.blame > 0 {
				bis = task.Bisection{Good: commits[rc.blame-1], Bad: head, Blame: commits[rc.blame], Subject: "a larger change", Steps: 2}
			}
			tk := failingTask(t, ctx, drv, dir, head, rc.failing, "task-"+rc.name, bis)
			res, ws := repairOffline(t, ctx, drv, tk, maxSteps)
			if res.Stop != harness.StopExit || !res.TestsPassed {
				t.Fatalf("stop=%s passed=%v", res.Stop, res.TestsPassed)
			}
			if !strings.Contains(res.Patch, rc.fixed+"\n") {
				t.Errorf("the patch is not the fix (%s):\n%s", rc.fixed, res.Patch)
			}
			if strings.Contains(res.Patch, ".test.") || strings.Count(res.Patch, "+++ ") != 1 {
				t.Errorf("the patch edits a test, or more than one file:\n%s", res.Patch)
			}
			// The failing test's whole file passes on the patched workspace.
			all, err := drv.RunPackages(ctx, ws.Dir, []string{rc.file})
			if err != nil {
				t.Fatal(err)
			}
			if !all.OK() || len(all.Passed) < 2 {
				t.Errorf("after the patch: %s\n%s", all.Summary(), all.Output)
			}
			if _, err := os.Lstat(filepath.Join(ws.Dir, "node_modules")); err == nil {
				t.Errorf("the repair left node_modules in the workspace")
			}
		})
	}
}
