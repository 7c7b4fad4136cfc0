package golang

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang/langtest"
)

// The Go driver passes the drivers' conformance suite.
func TestConformance(t *testing.T) {
	langtest.Run(t, Driver{Tests: Runner{}}, "testdata/conformance.txtar")
}
