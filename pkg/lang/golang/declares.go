package golang

import (
	"path"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// DeclaresTest reports whether the module at dir declares the test id,
// reading its files and running nothing: a package's directory is there,
// and a test's function (or example) is declared in one of its package's
// _test.go files.
func (Driver) DeclaresTest(dir, id string) bool {
	t, err := Resolve(dir, id)
	if err != nil {
		return false
	}
	if fi, err := untrusted.Lstat(dir, t.Dir); err != nil || !fi.IsDir() {
		return false
	}
	if t.IsPackage() {
		return true
	}
	ents, err := untrusted.ReadDir(dir, t.Dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := untrusted.ReadFile(dir, path.Join(t.Dir, e.Name()), testrun.MaxSourceBytes)
		if err != nil {
			continue
		}
		for _, m := range testDeclRE.FindAllSubmatch(src, -1) {
			if name, _, _ := strings.Cut(string(m[1]), "("); name == t.Func() {
				return true
			}
		}
	}
	return false
}
