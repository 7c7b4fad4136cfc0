package toylang

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// The gates' rules in the toy's words (pkg/validators asks for them as
// capabilities, never by the driver's name): no skip added, no expect
// removed, no test deleted, no code asking whether the tests run (the word
// testing), and no case answering a failing test's arguments.

// TestEditViolations: a skip added, an expectation removed (and not added
// back anywhere in the patch).
func (Driver) TestEditViolations(_ string, f unidiff.File, patch []unidiff.File) []string {
	p := f.Path()
	if !strings.HasSuffix(p, "_test.toy") {
		return nil
	}
	return gaterules.EditedLines(p, f.Changes(), gaterules.Added(patch...), gaterules.LineRules{
		Skip:   func(t string) bool { return t == "skip" },
		Assert: func(t string) bool { return strings.HasPrefix(t, "expect ") },
		Skips:  "a skip",
	})
}

// DeletedTests: a test line removed from a test file and added nowhere.
func (Driver) DeletedTests(_ string, patch []unidiff.File, _ func(string) bool) []string {
	keep := func(p string) bool { return strings.HasSuffix(p, "_test.toy") }
	return gaterules.DeletedDefs(patch, keep, func(l string) string {
		if name, ok := strings.CutPrefix(l, "test "); ok {
			return strings.TrimSpace(name)
		}
		return ""
	})
}

// detections: the word testing in code.
var detections = []gaterules.Detection{{RE: regexp.MustCompile(`\btesting\b`), How: "by the word testing (1 under test)"}}

// DetectsTests: code a patch adds that reads testing.
func (d Driver) DetectsTests(_ string, patch []unidiff.File, isTest func(string) bool) []string {
	var bad []string
	for _, f := range patch {
		if p := f.NewPath; p != "" && d.IsSource(p) && !isTest(p) {
			bad = append(bad, gaterules.DetectInLines(p, f.Changes(), isComment, detections)...)
		}
	}
	return bad
}

func isComment(t string) bool { return strings.HasPrefix(t, "#") }

// SpecialCases: a case the patch adds whose arguments are a failing test's
// arguments, which the package's code never named before.
func (d Driver) SpecialCases(dir string, patch []unidiff.File, failing []string, isTest func(string) bool) []string {
	isCode := func(p string) bool { return d.IsSource(p) && !isTest(p) }
	return gaterules.SpecialCases(dir, patch, isCode, d.testLiterals(dir, failing), gaterules.Code{
		Comparisons: func(p string, src []byte) ([]gaterules.Comparison, bool) {
			var out []gaterules.Comparison
			for _, df := range parseFile(p, string(src)).defs {
				for _, a := range df.params {
					if v, ok := literal(a); ok && df.isCase {
						out = append(out, gaterules.Comparison{Line: df.line, What: df.text, Verb: "compares with", Value: v})
					}
				}
			}
			return out, true
		},
		Literals: func(p string, src []byte, add func(string, int)) bool {
			for _, df := range parseFile(p, string(src)).defs {
				for _, tok := range append(append([]string(nil), df.params...), df.expr...) {
					if v, ok := literal(tok); ok {
						add(v, df.line)
					}
				}
			}
			return true
		},
	})
}

// testLiterals are the arguments and results the failing tests spell out.
func (d Driver) testLiterals(dir string, failing []string) map[string]gaterules.Literal {
	lits := map[string]gaterules.Literal{}
	for _, id := range failing {
		t, err := d.Resolve(dir, id)
		if err != nil {
			continue
		}
		for file, tests := range d.tests(dir, t.ImportPath) {
			for _, tt := range tests {
				if tt.name != t.Test {
					continue
				}
				for _, e := range tt.expects {
					for _, n := range append(append([]int(nil), e.args...), e.want) {
						if v, ok := literal(strconv.Itoa(n)); ok {
							if _, seen := lits[v]; !seen {
								lits[v] = gaterules.Literal{Test: tt.name, Where: fmt.Sprintf("%s:%d", file, e.line)}
							}
						}
					}
				}
			}
		}
	}
	return lits
}

// literal is an integer's canonical value, when it is distinctive enough
// (outside [-2, 2]).
func literal(tok string) (string, bool) {
	n, err := strconv.Atoi(tok)
	if err != nil || n >= -2 && n <= 2 {
		return "", false
	}
	return "number:" + tok, true
}
