package python

import (
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// pytest names a doctest by its module's file and the dotted name of the
// object whose docstring holds it, the module's import name first:
// "src/pkg/mod.py::pkg.mod.Class.method" (and "src/pkg/mod.py::pkg.mod"
// for the module's own docstring). Its JUnit report keeps the two apart
// (classname "src.pkg.mod", name "pkg.mod.Class.method"), but a name that
// joins them with a dot ("src.pkg.mod.pkg.mod.Class.method", as CI's
// reports and report.Result's passed tests do) reads like a test in
// classes: what follows the module is a doctest's name when it starts with
// the module's import name (an ending of its dotted path, which depends on
// where the module was imported from) and the file does not declare it as
// a test in classes.

// doctest reports that rest, what follows the module of file (whose dotted
// path is module) in a joined name, is a doctest's dotted name.
func (r *resolver) doctest(file string, module, rest []string) bool {
	if strings.ContainsAny(rest[len(rest)-1], "[]") {
		return false // parametrized: a test function's
	}
	mod := module
	if mod[len(mod)-1] == "__init__" {
		mod = mod[:len(mod)-1]
	}
	named := false
	for j := range mod {
		n := len(mod) - j
		if len(rest) >= n && slices.Equal(rest[:n], mod[j:]) {
			named = true
			break
		}
	}
	return named && !r.declaresChain(file, rest)
}

// declaresChain reports that the file declares the test chain: classes
// nested in that order, and the function or class last.
func (r *resolver) declaresChain(file string, chain []string) bool {
	src, err := readSource(r, file)
	if err != nil {
		return false
	}
	for _, d := range parseDefs(src) {
		if len(d.classes)+1 == len(chain) && d.name == chain[len(chain)-1] && slices.Equal(d.classes, chain[:len(chain)-1]) {
			return true
		}
	}
	return false
}

// readSource reads a Python file of the checkout, bounded, without
// following a link.
func readSource(r *resolver, file string) ([]byte, error) {
	return untrusted.ReadFile(r.dir, file, maxSourceBytes)
}
