// Package toylang is a language that exists only in the tests: a driver
// behind the language seam (pkg/lang) for a trivial line format, added as
// this one package plus one registration line where a test lists the
// drivers, to show that a language is a package: it passes the drivers'
// conformance suite (pkg/lang/langtest), and the gates hold its tests to
// the rules every language's are, through its capabilities alone.
//
// A toy project has a toy.mod at its root. Its code is .toy files, one
// definition a line ("def add x y = x + y": integers, the parameters, + -
// and *, evaluated left to right; "case add 40 2 = 42" answers a call with
// those arguments; the word testing is 1 under test, else 0); its tests are
// *_test.toy files ("test adds", then indented "expect add 40 2 = 42" and
// "skip" lines), run in the driver itself, named PACKAGE.NAME where a
// package is a directory ("calc.adds"); what lies under testdata is test
// data; # starts a comment.
package toylang

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Driver runs toy projects; it has nothing to configure.
type Driver struct{}

// Name is "toy".
func (Driver) Name() string { return "toy" }

// Detect: a toy.mod at the root is certain; .toy files at the root a weak
// sign.
func (Driver) Detect(dir string) int {
	if fi, err := untrusted.Lstat(dir, "toy.mod"); err == nil && fi.Mode().IsRegular() {
		return 100
	}
	if ents, err := untrusted.ReadDir(dir, "."); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".toy") && e.Type().IsRegular() {
				return 10
			}
		}
	}
	return 0
}

// Setup has nothing to do: a toy project has no dependencies.
func (Driver) Setup(context.Context, string) error { return nil }

// IsSource: .toy files, tests too.
func (Driver) IsSource(rel string) bool { return strings.HasSuffix(rel, ".toy") }

// IsTestFile: *_test.toy files, and anything under testdata.
func (d Driver) IsTestFile(rel string) bool {
	return strings.HasSuffix(rel, "_test.toy") || d.IsTestData(rel)
}

// IsTestData: what lies under testdata.
func (Driver) IsTestData(rel string) bool {
	for _, seg := range strings.Split(path.Dir(filepath.ToSlash(rel)), "/") {
		if seg == "testdata" {
			return true
		}
	}
	return false
}

// PackageOf is the directory of a .toy file.
func (d Driver) PackageOf(_, rel string) (string, bool) {
	rel = path.Clean(filepath.ToSlash(rel))
	if !d.IsSource(rel) || d.IsTestData(rel) || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return path.Dir(rel), true
}

// Check reads the .toy files: a line that is not a definition or a case
// (in code), or not a test, an expect or a skip (in tests), is a finding.
func (d Driver) Check(_ context.Context, dir string, files []string) ([]findings.Finding, error) {
	var out []findings.Finding
	for _, f := range files {
		if !d.IsSource(f) || d.IsTestData(f) {
			continue
		}
		src, err := untrusted.ReadText(dir, f, maxFile)
		if err != nil {
			continue // a file the patch deletes
		}
		for _, e := range parseFile(f, src).errs {
			out = append(out, findings.Finding{Key: f + ": " + e.msg, Text: fmt.Sprintf("%s:%d: %s", f, e.line, e.msg)})
		}
	}
	return out, nil
}

// Index indexes the definitions of the .toy files: each a function.
func (d Driver) Index(dir string) (*codeindex.Index, error) {
	return codeindex.BuildWith(dir, codeindex.Parser{
		Source:  d.IsSource,
		SkipDir: func(name string) bool { return name == "testdata" || strings.HasPrefix(name, ".") },
		Parse: func(rel string, src []byte) []codeindex.Symbol {
			var out []codeindex.Symbol
			for _, def := range parseFile(rel, string(src)).defs {
				out = append(out, codeindex.Symbol{Name: def.name, Kind: codeindex.KindFunc, File: rel, Line: def.line, EndLine: def.line, Signature: def.text})
			}
			return out
		},
		IsTest: d.IsTestFile,
	})
}

// Localize has no coverage to measure: nothing is ranked.
func (Driver) Localize(context.Context, string, []string, int) (testrun.Spectra, error) {
	return testrun.Spectra{}, nil
}
