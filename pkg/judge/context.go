package judge

import (
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/quote"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Source is a piece of the repository the judge reads: a failing test's
// function, or a file it compares with.
type Source = quote.Source

// Change is one changed function (or file region) before and after the
// patch.
type Change struct {
	Where  string `json:"where"` // "parse.go: func Parse"
	Before string `json:"before"`
	After  string `json:"after"`
}

// Caps on the changed code quoted, in bytes.
const (
	maxChange  = 4000
	maxChanges = 6
)

// WithContext fills in.Tests and in.Code from dir, a checkout with the
// patch applied, through l, the repository's language driver: each failing
// test's source as the driver quotes it (TestQuoter), else its function
// found by the driver's parser with the fixtures of its file it takes and
// the data files its strings name; and each changed function or
// declaration of the language's files before and after the patch, as the
// driver delimits it (DeclarationsAt), else as its parser does. What
// cannot be read is left out.
func WithContext(dir string, l Language, in Input) Input {
	if len(in.Tests) == 0 {
		seen := map[string]bool{}
		for _, id := range in.Task.Tests() {
			srcs := testSources(dir, l, id)
			if len(srcs) == 0 || seen[srcs[0].Name] {
				continue // the same test named twice is quoted once
			}
			seen[srcs[0].Name] = true
			in.Tests = append(in.Tests, srcs...)
		}
	}
	if len(in.Code) == 0 {
		if files, err := unidiff.Parse(in.Patch); err == nil {
			in.Code = changes(dir, files, declarationsOf(l))
		}
	}
	return in
}

// changes shows each changed declaration of the patch's files before and
// after, for the files declarations delimits (by path).
func changes(dir string, files []unidiff.File, declarations func(path string) declsAt) []Change {
	var out []Change
	for _, f := range files {
		if len(out) >= maxChanges {
			break
		}
		if f.NewPath == "" || f.OldPath == "" || f.Binary {
			continue // created or deleted files are whole in the patch
		}
		at := declarations(f.NewPath)
		if at == nil {
			continue
		}
		after, err := untrusted.ReadText(dir, f.NewPath, quote.MaxSourceFile)
		if err != nil {
			continue
		}
		before, ok := unapply(string(after), f.Hunks)
		if !ok {
			continue
		}
		bf := at(before, oldLines(f))
		af := at(string(after), newLines(f))
		names := map[string]bool{}
		for n := range bf {
			names[n] = true
		}
		for n := range af {
			names[n] = true
		}
		var keys []string
		for n := range names {
			keys = append(keys, n)
		}
		sort.Strings(keys)
		for _, n := range keys {
			if len(out) >= maxChanges {
				break
			}
			b, a := bf[n], af[n]
			if b == "" {
				b = "(not there)"
			}
			if a == "" {
				a = "(removed)"
			}
			out = append(out, Change{Where: f.NewPath + ": " + n, Before: quote.Text(b, maxChange), After: quote.Text(a, maxChange)})
		}
	}
	return out
}

// unapply undoes the hunks on the new file's text, giving the old one.
func unapply(after string, hunks []unidiff.Hunk) (string, bool) {
	lines := strings.SplitAfter(after, "\n")
	var out []string
	next := 0 // index into lines
	for _, h := range hunks {
		start := h.NewStart - 1
		if h.NewCount == 0 {
			start = h.NewStart // an empty new side sits after line NewStart
		}
		if start < next || start > len(lines) {
			return "", false
		}
		out = append(out, lines[next:start]...)
		n := len(h.NewSide())
		if start+n > len(lines) {
			return "", false
		}
		for _, l := range h.OldSide() {
			out = append(out, l+"\n")
		}
		next = start + n
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, ""), true
}

func oldLines(f unidiff.File) map[int]bool {
	m := map[int]bool{}
	for _, l := range f.Changes() {
		if l.Removed() {
			m[l.OldLine] = true
		}
	}
	// Added lines sit between old lines: count the old line before them.
	for _, h := range f.Hunks {
		old := h.OldStart - 1
		for _, l := range h.Lines {
			if l.OldLine > 0 {
				old = l.OldLine
			}
			if l.Added() {
				m[max(old, 1)] = true
			}
		}
	}
	return m
}

func newLines(f unidiff.File) map[int]bool {
	m := map[int]bool{}
	for _, h := range f.Hunks {
		cur := h.NewStart - 1
		for _, l := range h.Lines {
			if l.NewLine > 0 {
				cur = l.NewLine
			}
			switch {
			case l.Added():
				m[l.NewLine] = true
			case l.Removed():
				m[max(cur, 1)] = true
			}
		}
	}
	return m
}

// declsAt gives the declarations of a file's text (src) that hold one of
// lines, by name.
type declsAt func(src string, lines map[int]bool) map[string]string
