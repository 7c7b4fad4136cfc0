package node

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang/langtest"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// The node driver passes the drivers' conformance suite, on node:test.
func TestConformance(t *testing.T) {
	nodetest.Require(t)
	langtest.Run(t, Driver{CacheDir: nodetest.CacheDir(t)}, "testdata/conformance.txtar")
}
