package node

import (
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// DeclaresTest reports whether the checkout at dir declares the test id
// (as Resolve names it), reading its files and running nothing: a test
// file or directory is there; a test is one its file declares with a
// literal name, or a describe block of them, or a subtest of one.
func (Driver) DeclaresTest(dir, id string) bool {
	t, err := newResolver(dir).resolve(id)
	if err != nil {
		return false
	}
	if t.IsPackage() {
		return true
	}
	src, err := untrusted.ReadFile(dir, t.ImportPath, maxSourceBytes)
	if err != nil {
		return false
	}
	for _, d := range declaredTests(t.ImportPath, src) {
		n := d.name()
		if n == t.Test || strings.HasPrefix(n, t.Test+" > ") || strings.HasPrefix(t.Test, n+" > ") {
			return true
		}
	}
	return false
}
