package node

import (
	"testing"

	"github.com/redfix/redfix/pkg/task"
)

// The driver registers its files as files of tests: a failure of a
// JavaScript or TypeScript file is named as the runners name it, and only
// those files are claimed.
func TestRegistersTestFileRule(t *testing.T) {
	f := task.Failure{Package: "src/calc.test.ts", Test: "calc > adds"}
	if got, want := f.ID(), "src/calc.test.ts::calc > adds"; got != want {
		t.Errorf("ID() = %q, want %q", got, want)
	}
	for _, ext := range []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"} {
		if !task.IsTestFilePath("test/a.test" + ext) {
			t.Errorf("a %s file is not claimed as a file of tests", ext)
		}
	}
	if task.IsTestFilePath("example.com/m/json") || task.IsTestFilePath("src/a.test.json") {
		t.Error("a package that is no JavaScript or TypeScript file is claimed")
	}
}
