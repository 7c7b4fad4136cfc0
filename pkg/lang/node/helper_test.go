package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// fixture is a checkout of a nodetest history at its last commit, a
// confining context for it, and a driver whose node_modules are the
// tests' shared cache.
func fixture(t *testing.T, archives ...string) (context.Context, Driver, string) {
	t.Helper()
	nodetest.Require(t)
	dir, _ := nodetest.History(t, archives...)
	ctx := nodetest.Confined(t, "o/fixture")
	return ctx, Driver{CacheDir: nodetest.CacheDir(t)}, dir
}

// clean fails t when the checkout at dir has anything git does not know
// of or that differs from its last commit, or a node_modules left behind.
func clean(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--ignored").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if len(out) != 0 {
		t.Errorf("the run left the checkout changed:\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(dir, "node_modules")); err == nil {
		t.Errorf("the run left node_modules in the checkout")
	}
}
