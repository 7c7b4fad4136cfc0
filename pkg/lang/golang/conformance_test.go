package golang

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang/langtest"
	"github.com/redfix/redfix/pkg/testrun"
)

// The Go driver passes the drivers' conformance suite.
func TestConformance(t *testing.T) {
	langtest.Run(t, Driver{Tests: testrun.Runner{}}, "testdata/conformance.txtar")
}
