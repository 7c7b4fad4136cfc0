package toylang_test

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/langtest"
	"github.com/redfix/redfix/pkg/lang/langtest/toylang"
)

var _ lang.Driver = toylang.Driver{}

// The toy language passes the drivers' conformance suite: the gates catch
// its cheats through its capabilities, never its name.
func TestConformance(t *testing.T) {
	langtest.Run(t, toylang.Driver{}, "testdata/conformance.txtar")
}
