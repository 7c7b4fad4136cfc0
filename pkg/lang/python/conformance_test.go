package python

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang/langtest"
)

// The Python driver passes the drivers' conformance suite, confined.
func TestConformance(t *testing.T) {
	t.Parallel()
	langtest.RunIn(t, confined(t), pythonDriver(t), "testdata/conformance.txtar")
}
