package offline

import (
	"path"
	"strings"
)

// Which files the templates change: a language's code, by its extension,
// and not a test's.

// jsExts are the extensions of JavaScript's and TypeScript's files.
var jsExts = []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}

// isJS reports a JavaScript or TypeScript file, by its extension.
func isJS(p string) bool {
	for _, ext := range jsExts {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}

// dialectOf is the dialect of the file at path, by its extension.
func dialectOf(p string) (dialect, bool) {
	switch {
	case strings.HasSuffix(p, ".go"):
		return goDialect, true
	case strings.HasSuffix(p, ".py"):
		return pyDialect, true
	case isJS(p):
		return jsDialect, true
	}
	return dialect{}, false
}

// isSource reports whether path is a file of code the templates can change
// (Go, Python, JavaScript or TypeScript) and not a test's. TypeScript's
// declaration files (.d.ts) and installed packages are not code to repair.
func isSource(p string) bool {
	if _, ok := dialectOf(p); !ok || isTestPath(p) {
		return false
	}
	if isJS(p) {
		if strings.Contains(path.Base(p), ".d.") || hasDir(p, "node_modules") {
			return false
		}
	}
	return true
}

// isTestPath reports a file of tests: Go's _test.go; Python's test_*.py,
// *_test.py, conftest.py, and the .py files under a tests or test
// directory; JavaScript's and TypeScript's *.test.* and *.spec.* files,
// and those under a __tests__, __mocks__, tests or test directory.
func isTestPath(p string) bool {
	if strings.HasSuffix(p, "_test.go") {
		return true
	}
	base := path.Base(p)
	switch {
	case strings.HasSuffix(p, ".py"):
		if strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" {
			return true
		}
		return hasDir(p, "tests", "test")
	case isJS(p):
		if strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") {
			return true
		}
		return hasDir(p, "__tests__", "__mocks__", "tests", "test")
	}
	return false
}

// hasDir reports whether one of the directories p is under is named one of
// names.
func hasDir(p string, names ...string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		for _, n := range names {
			if seg == n {
				return true
			}
		}
	}
	return false
}
