package python

import (
	"slices"
	"strings"
)

// DeclaresTest reports whether the checkout at dir declares the test id
// (as Resolve names it), reading its files and running nothing: a test
// file or directory is there; a test is a function or class of its file,
// in its classes; a doctest is the module itself or an object of the
// module its dotted name ends with.
func (Driver) DeclaresTest(dir, id string) bool {
	r := newResolver(dir)
	t, err := r.resolve(id)
	if err != nil {
		return false
	}
	if t.IsPackage() {
		return true
	}
	base, _ := cutParams(t.Test)
	chain := strings.Split(base, "::")
	if len(chain) > 1 {
		return r.declaresChain(t.ImportPath, chain)
	}
	if r.declaresChain(t.ImportPath, chain) {
		return true
	}
	// A doctest: the module's own docstring, or an object the module
	// declares.
	names := strings.Split(base, ".")
	module := strings.Split(strings.TrimSuffix(t.ImportPath, ".py"), "/")
	if module[len(module)-1] == "__init__" {
		module = module[:len(module)-1]
	}
	if len(names) <= len(module) && slices.Equal(module[len(module)-len(names):], names) {
		return true
	}
	src, err := readSource(r, t.ImportPath)
	if err != nil {
		return false
	}
	for _, d := range parseDefs(src) {
		if d.name == names[len(names)-1] {
			return true
		}
	}
	return false
}
