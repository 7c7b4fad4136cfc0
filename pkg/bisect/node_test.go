package bisect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/bisect"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
	"github.com/redfix/redfix/pkg/task"
)

// With the Node driver as its language, bisection names a jest test as
// jest-junit's default dialect does (the suite, then the names joined by
// spaces: resolved to the canonical id), runs it with jest at each commit
// (node_modules set up for each), and finds the commit that broke it.
func TestBisectJestWithTheNodeDriver(t *testing.T) {
	t.Parallel()
	nodetest.Require(t)
	dir, shas := nodetest.History(t, nodetest.Cart...)
	ctx, cancel := context.WithTimeout(nodetest.Confined(t, dir), 5*time.Minute)
	defer cancel()
	d := node.Driver{CacheDir: nodetest.CacheDir(t)}
	ids, err := bisect.Canonical(d, dir, []string{nodetest.CartJUnitSuite + "." + nodetest.CartJUnitName})
	if err != nil || len(ids) != 1 || ids[0] != nodetest.CartTest {
		t.Fatalf("canonical %q, %v; want %s", ids, err, nodetest.CartTest)
	}
	bis, err := bisect.Bisector{Lang: d}.Bisect(ctx, dir, shas[0], "HEAD", ids)
	if err != nil {
		t.Fatal(err)
	}
	if bis.Blame != shas[nodetest.CartBroken] || bis.AddedTest {
		t.Errorf("blame %s (%s), want %s", task.Short(bis.Blame), bis.Subject, task.Short(shas[nodetest.CartBroken]))
	}
	// A test no file declares is not found, as go test's is not.
	if _, err := (bisect.Bisector{Lang: d}).Bisect(ctx, dir, shas[0], "HEAD", []string{"src/cart.test.js::cart > nothing"}); err == nil {
		t.Error("a test that does not exist was bisected")
	}
	// A test file that is not there is no package to build.
	_, f, err := bisect.BuildBisector{Lang: d}.BuildPackage(ctx, dir, "src/gone.test.js")
	if err != nil || f == nil || !strings.HasPrefix(f.Message, "no such package here: ") {
		t.Errorf("a missing test file: %+v, %v", f, err)
	}
}
