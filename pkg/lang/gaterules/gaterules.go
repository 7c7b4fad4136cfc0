// Package gaterules holds what the language drivers' rules for the gates
// (pkg/validators) share, so that each language writes only its own words:
// a patched file read before and after the patch, test detection read from
// the lines a patch adds, special-casing of a failing test's values, the
// assertions a test file held before the patch, the tests a patch deletes,
// and the files that import a change, nearest first. Every file is read
// from the checkout as untrusted: beneath it, through no link, sized first.
package gaterules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// MaxSourceBytes bounds a file the rules read from the checkout; a larger
// one is passed over.
const MaxSourceBytes = 4 << 20

// Read reads the regular file p (slash-separated, relative) beneath dir,
// through no link, at most MaxSourceBytes: what the checkout holds is
// untrusted once tests ran in it.
func Read(dir, p string) ([]byte, error) { return untrusted.ReadFile(dir, p, MaxSourceBytes) }

// Sides are a patched file's text before and after the patch: after read
// from the checkout at dir, before rebuilt by undoing the patch (empty for
// a file the patch adds or deletes, on that side).
func Sides(dir string, f unidiff.File) (before, after []byte, ok bool) {
	if f.NewPath != "" {
		var err error
		if after, err = Read(dir, f.NewPath); err != nil {
			return nil, nil, false
		}
	}
	if f.OldPath != "" {
		b, err := f.Undo(string(after))
		if err != nil {
			return nil, nil, false
		}
		before = []byte(b)
	}
	return before, after, true
}

// ListFiles names the regular files in the directory rel under dir,
// reached through no link.
func ListFiles(dir, rel string) ([]string, error) {
	ents, err := untrusted.ReadDir(dir, rel)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", rel, err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Norm is a line without its indentation and trailing spaces.
func Norm(s string) string { return strings.TrimSpace(s) }

// OneLine is s on one line, its blanks collapsed, cut at max bytes.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// Added are the lines the files add, normalized (Norm): a removed line
// added back is a move, not a removal.
func Added(files ...unidiff.File) map[string]bool {
	added := map[string]bool{}
	for _, f := range files {
		for _, l := range f.Changes() {
			if l.Added() {
				added[Norm(l.Text)] = true
			}
		}
	}
	return added
}

// SortedKeys are m's keys, sorted.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Dedup drops the repeats of a sorted list.
func Dedup(xs []string) []string {
	var out []string
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// DeletedDefs names the definitions (tests, test classes) the patch
// removes from the files keep holds and does not add back anywhere: name
// is the definition a line makes, "" for none.
func DeletedDefs(files []unidiff.File, keep func(path string) bool, name func(line string) string) []string {
	type where struct {
		file string
		line int
	}
	added := map[string]bool{}
	removed := map[string]where{}
	for _, f := range files {
		if !keep(f.Path()) {
			continue
		}
		for _, l := range f.Changes() {
			n := name(Norm(l.Text))
			if n == "" {
				continue
			}
			if l.Added() {
				added[n] = true
			} else if _, ok := removed[n]; !ok {
				removed[n] = where{f.OldPath, l.Number()}
			}
		}
	}
	var bad []string
	for n, w := range removed {
		if !added[n] {
			bad = append(bad, fmt.Sprintf("%s:%d: deletes test %s", w.file, w.line, n))
		}
	}
	sort.Strings(bad)
	return bad
}

// Assertion is an assertion statement of a file.
type Assertion struct {
	Text      string // its text, blanks collapsed
	First     string // its first line
	Line      int
	Multiline bool
}

// AssertionOf is the assertion statement whose text (as written) starts
// at line.
func AssertionOf(text string, line int) Assertion {
	first, _, _ := strings.Cut(text, "\n")
	return Assertion{Text: strings.Join(strings.Fields(text), " "), First: Norm(first), Line: line, Multiline: strings.Contains(strings.TrimSpace(text), "\n")}
}

// EditedAssertions names the assertions over several lines the file held
// before the patch (before) and no longer holds as they were (after): one
// edited on a line of its own but its first, which a rule on added and
// removed lines does not see.
func EditedAssertions(file string, before, after []Assertion) []string {
	now := map[string]int{}
	for _, a := range after {
		now[a.Text]++
	}
	var bad []string
	for _, a := range before {
		if now[a.Text] > 0 {
			now[a.Text]--
			continue
		}
		if a.Multiline {
			bad = append(bad, fmt.Sprintf("%s:%d: removes or edits an assertion: %s", file, a.Line, a.First))
		}
	}
	return bad
}

// LineRules are a language's rules on the changed lines of a test file,
// each line normalized (Norm): an added line Skip holds adds a skip (Skips
// names it: "a skip", "a skip or a focus"), a removed one Assert holds
// removes an assertion unless the patch adds it back; lines Comment holds
// are passed over.
type LineRules struct {
	Skip, Assert, Comment func(line string) bool
	Skips                 string
}

// EditedLines are the evidence of LineRules against the file p's changes;
// added are the lines the patch adds (Added), where a removed line may be
// added back.
func EditedLines(p string, changes []unidiff.Line, added map[string]bool, r LineRules) []string {
	var bad []string
	for _, l := range changes {
		t := Norm(l.Text)
		if r.Comment != nil && r.Comment(t) {
			continue
		}
		switch {
		case l.Added() && r.Skip(t):
			bad = append(bad, fmt.Sprintf("%s:%d: adds %s: %s", p, l.Number(), r.Skips, t))
		case l.Removed() && r.Assert(t) && !added[t]:
			bad = append(bad, fmt.Sprintf("%s:%d: removes an assertion: %s", p, l.Number(), t))
		}
	}
	return bad
}
