package python

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPyImportGraph reads a checkout of 2,000 modules in 40 packages
// (each importing three others, relative and absolute) and 500 test
// modules, and finds the test modules a change of one module reaches.
func BenchmarkPyImportGraph(b *testing.B) {
	dir := b.TempDir()
	put := func(rel, text string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	const pkgs, perPkg, tests = 40, 50, 500
	for i := range pkgs {
		put(fmt.Sprintf("app/p%d/__init__.py", i), "")
		for j := range perPkg {
			put(fmt.Sprintf("app/p%d/m%d.py", i, j), fmt.Sprintf(
				"import os\nfrom app.p%d import m%d\nfrom .m%d import thing\nfrom ..p%d.m%d import other\n\n\ndef f%d(x):\n    return x + %d\n",
				(i+1)%pkgs, j, (j+1)%perPkg, (i+7)%pkgs, (j+3)%perPkg, j, j))
		}
	}
	for k := range tests {
		put(fmt.Sprintf("tests/test_%d.py", k), fmt.Sprintf("from app.p%d.m%d import f%d\n\n\ndef test_%d():\n    assert f%d(1) == %d\n", k%pkgs, k%perPkg, k%perPkg, k, k%perPkg, k%perPkg+1))
	}
	b.ResetTimer()
	var reached int
	for b.Loop() {
		mods, err := importGraph(dir)
		if err != nil {
			b.Fatal(err)
		}
		reached = len(importers(mods, []string{"app/p3/m5.py"}, nil))
	}
	b.ReportMetric(float64(reached), "tests-reached")
	b.ReportMetric(float64(pkgs*perPkg+tests), "modules")
}
