package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkImportGraph reads a checkout of 2,000 TypeScript modules in 40
// directories (each importing three others: extensionless, ./x.js for
// x.ts, and a directory's index), each directory with an index file
// re-exporting its modules, and 500 test files, and finds the test files a
// change of one module reaches.
func BenchmarkImportGraph(b *testing.B) {
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
	const dirs, perDir, tests = 40, 50, 500
	for i := range dirs {
		var index strings.Builder
		for j := range perDir {
			put(fmt.Sprintf("src/d%d/m%d.ts", i, j), fmt.Sprintf(
				"import { f%d } from \"../d%d/m%d\";\nimport { f%d as g } from \"./m%d.js\";\nimport * as other from \"../d%d\";\n\nexport function f%d(x: number): number {\n  return x + %d;\n}\n",
				j, (i+1)%dirs, j, (j+1)%perDir, (j+1)%perDir, (i+7)%dirs, j, j))
			fmt.Fprintf(&index, "export * from \"./m%d\";\n", j)
		}
		put(fmt.Sprintf("src/d%d/index.ts", i), index.String())
	}
	for k := range tests {
		put(fmt.Sprintf("test/t%d.test.ts", k), fmt.Sprintf("import { expect, it } from \"vitest\";\nimport { f%d } from \"../src/d%d/m%d\";\n\nit(\"adds %d\", () => {\n  expect(f%d(1)).toBe(%d);\n});\n", k%perDir, k%dirs, k%perDir, k, k%perDir, k%perDir+1))
	}
	isTest := func(p string) bool { return strings.HasSuffix(p, ".test.ts") }
	b.ResetTimer()
	var reached int
	for b.Loop() {
		mods, err := importGraph(dir)
		if err != nil {
			b.Fatal(err)
		}
		reached = len(importers(mods, []string{"src/d3/m5.ts"}, isTest, nil))
	}
	b.ReportMetric(float64(reached), "tests-reached")
	b.ReportMetric(float64(dirs*(perDir+1)+tests), "modules")
}
