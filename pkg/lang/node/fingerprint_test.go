package node

import (
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// A JavaScript or TypeScript failure (its test file, or a frame's file, is
// one) loses its checkout's root and its colours; another language's
// failure is not the driver's.
func TestNormalizeFailure(t *testing.T) {
	for _, c := range []struct {
		name     string
		in       task.Failure
		own      bool
		pkg, msg string
	}{
		{"absolute test file", task.Failure{Package: "/home/runner/work/shop/shop/src/cart.test.ts", Test: "cart > totals",
			Message: "\x1b[31mCannot find module './tax'\x1b[39m imported from file:///home/runner/work/shop/shop/src/cart.ts"},
			true, "src/cart.test.ts", "Cannot find module './tax' imported from src/cart.ts"},
		{"relative test file", task.Failure{Package: "src/cart.test.mjs", Test: "t", Message: "at (/a/b/c/d.cjs) and '/x/y.jsx'"},
			true, "src/cart.test.mjs", "at (c/d.cjs) and 'x/y.jsx'"},
		{"a frame", task.Failure{Package: "cart", Test: "t", Message: "/a/b/c.ts: boom", Frames: []string{"/a/b/c.ts:3"}},
			true, "cart", "b/c.ts: boom"},
		{"a Go failure", task.Failure{Package: "example.com/m/x", Test: "TestX", Message: "open /home/a/x.js: no such file", Frames: []string{"x/x_test.go:3"}},
			false, "example.com/m/x", "open /home/a/x.js: no such file"},
		{"a Python failure", task.Failure{Package: "/w/tests/test_x.py", Test: "test_y", Message: "\x1b[31m/w/a.js\x1b[0m"},
			false, "/w/tests/test_x.py", "\x1b[31m/w/a.js\x1b[0m"},
	} {
		got, own := Driver{}.NormalizeFailure(c.in)
		if own != c.own || got.Package != c.pkg || got.Message != c.msg || got.Test != c.in.Test {
			t.Errorf("%s: NormalizeFailure = %q %q %q, %v; want %q %q, %v", c.name, got.Package, got.Test, got.Message, own, c.pkg, c.msg, c.own)
		}
	}
}
