package gaterules

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/unidiff"
)

// Special-casing: code that singles out a value the failing test spells
// out (`if a == 150`, `case "2024-02-30":`, a lookup table keyed by it)
// makes the test pass without mending what users run. Each language reads
// its failing tests' literals and its code's comparisons; what is reported
// is the same: a comparison on a line the patch adds, in code that is not
// a test, with a failing test's literal that the code of its directory
// never held before the patch.

// Literal is where a failing test spells a value out: an input it passes
// or a result it expects. Values are canonical: "number:150",
// "string:abc" (see ShowLiteral).
type Literal struct {
	Test  string // the test
	Where string // file:line in the test
}

// Comparison is one place a file singles a literal out.
type Comparison struct {
	Line  int    // the line it is on (1-based)
	What  string // what is written there, on one line
	Verb  string // how it singles the value out: "compares with", "is keyed by"
	Value string // the literal's canonical value
}

// Code is how a language reads a file of its code for special-casing: the
// comparisons it makes with literals, and every literal it holds (with its
// line). A file it cannot parse gives ok false.
type Code struct {
	Comparisons func(p string, src []byte) ([]Comparison, bool)
	Literals    func(p string, src []byte, add func(v string, line int)) bool
}

// SpecialCases names the comparisons the patch adds to the files code
// holds (code, not tests) with a failing test's literal (lits) that the
// files of the same directory that code holds did not hold before the
// patch (outside the lines it added).
func SpecialCases(dir string, files []unidiff.File, isCode func(p string) bool, lits map[string]Literal, read Code) []string {
	if len(lits) == 0 {
		return nil
	}
	addedIn := map[string]map[int]bool{}
	for _, f := range files {
		if f.NewPath == "" {
			continue
		}
		m := map[int]bool{}
		for _, l := range f.Changes() {
			if l.Added() {
				m[l.NewLine] = true
			}
		}
		addedIn[f.NewPath] = m
	}
	var bad []string
	known := map[string]map[string]bool{} // directory -> literals its code held
	for _, f := range files {
		p := f.NewPath
		if p == "" || !isCode(p) || len(addedIn[p]) == 0 {
			continue
		}
		src, err := Read(dir, p)
		if err != nil {
			continue
		}
		cmps, ok := read.Comparisons(p, src)
		if !ok {
			continue
		}
		d := path.Dir(p)
		if known[d] == nil {
			known[d] = dirLiterals(dir, d, isCode, addedIn, read)
		}
		for _, c := range cmps {
			tl, inTest := lits[c.Value]
			if !inTest || !addedIn[p][c.Line] || known[d][c.Value] {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s:%d: special-cases a value of the failing test: %s %s %s, which %s uses at %s and the code never did before",
				p, c.Line, c.What, c.Verb, ShowLiteral(c.Value), tl.Test, tl.Where))
		}
	}
	sort.Strings(bad)
	return Dedup(bad)
}

// dirLiterals are the literals of the code files in the directory d,
// outside the lines the patch added.
func dirLiterals(dir, d string, isCode func(string) bool, addedIn map[string]map[int]bool, read Code) map[string]bool {
	out := map[string]bool{}
	names, err := ListFiles(dir, d)
	if err != nil {
		return out
	}
	for _, name := range names {
		p := path.Join(d, name)
		if !isCode(p) {
			continue
		}
		src, err := Read(dir, p)
		if err != nil {
			continue
		}
		added := addedIn[p]
		read.Literals(p, src, func(v string, n int) {
			if !added[n] {
				out[v] = true
			}
		})
	}
	return out
}

// ShowLiteral writes a canonical value back as the evidence shows it: a
// string quoted, a number as is.
func ShowLiteral(v string) string {
	if s, ok := strings.CutPrefix(v, "string:"); ok {
		return strconv.Quote(s)
	}
	return strings.TrimPrefix(v, "number:")
}
