package validators

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redfix/redfix/pkg/canon"
	"github.com/redfix/redfix/pkg/unidiff"
)

// What a blame commit was for, read from its diff. Each run of changed
// lines of its code (test files and files that are not code left out) is
// one change, and each change is one of three kinds:
//
//   - it declares something new (a function, method, type, class,
//     constant): its purpose lives on while those names are declared;
//   - it renames a declaration: it lives on while the new name is declared
//     and the old one is not back;
//   - it changes behaviour (any other change): it is undone when the patch
//     takes its lines out and puts the lines it replaced back, compared as
//     tokens (spacing, comments and the names of locals do not matter).
//
// A patch that undoes some changes and keeps others restores the lines that
// broke the test and keeps the culprit's purpose: that is a fix. One that
// removes or renames back what the culprit declared, or undoes every one of
// its changes, throws the purpose away: that is a revert, whatever its
// wording.

// change is one run of a blame commit's changed lines in one file.
type change struct {
	kind    code     // how its file is read
	file    string   // the file's path after the blame commit
	line    int      // the first changed line's number in that file (or the old one for a pure removal)
	where   string   // the declaration the change is in, from the hunk's context; "" when unknown
	removed []string // the lines the blame removed
	added   []string // the lines the blame added
	// declares are the names the change adds a declaration of, renames the
	// declarations it renames (old → new).
	declares []string
	renames  [][2]string
}

// code is how the revert gate reads a file of the language's code: the
// name a line declares ("" for none), and the prefixes its line comments
// start with (the driver's Declarations).
type code struct {
	declared func(line string) string
	comments []string
}

// declares is the name the line declares, "" for none.
func (k code) declares(line string) string {
	if k.declared == nil {
		return ""
	}
	return k.declared(line)
}

// commentAt reports a line comment starting at s.
func (k code) commentAt(s string) bool {
	for _, c := range k.comments {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return false
}

// codeOf is how the revert gate reads the file p: ok false for a file that
// is not code (a test, data, documentation).
type codeOf func(p string) (code, bool)

// changesOf cuts the blame's code files into changes: runs of changed
// lines, a run cut where an added line starts a new declaration (so that a
// function added after a mended line is a change of its own); then pairs,
// file by file, the declarations the blame removed with those it added as
// renames.
func changesOf(blame []unidiff.File, read codeOf) []change {
	var out []change
	for _, f := range blame {
		kind, ok := read(f.Path())
		if !ok {
			continue
		}
		var runs []change
		for _, h := range f.Hunks {
			where := kind.declares(h.Section)
			var cur *change
			flush := func() {
				if cur != nil && !(allTrivial(kind, cur.removed) && allTrivial(kind, cur.added)) {
					runs = append(runs, *cur)
				}
				cur = nil
			}
			for _, l := range h.Lines {
				if l.Kind == ' ' {
					flush()
					if n := kind.declares(l.Text); n != "" {
						where = n
					}
					continue
				}
				if l.Added() && cur != nil && len(cur.added) > 0 && kind.declares(l.Text) != "" {
					flush()
				}
				if cur == nil {
					cur = &change{kind: kind, file: f.Path(), line: l.Number(), where: where}
				}
				if l.Added() {
					cur.added = append(cur.added, l.Text)
				} else {
					cur.removed = append(cur.removed, l.Text)
				}
			}
			flush()
		}
		out = append(out, classify(kind, runs)...)
	}
	return out
}

// allTrivial reports lines with nothing to say once comments are dropped
// (blank, brace-only and comment lines).
func allTrivial(kind code, lines []string) bool {
	for _, t := range tokens(kind, lines) {
		if !trivial(t) {
			return false
		}
	}
	return true
}

// classify names what each run of one file declares and renames: a name
// declared on an added line of the file and on no removed one is new,
// unless a name declared on a removed line is declared on no added one: a
// rename, paired with the new declaration whose line reads most like the
// old one's (the same parameters and types).
func classify(kind code, runs []change) []change {
	removed, added := map[string]string{}, map[string]string{} // name → its line
	where := map[string]int{}                                  // new name → its run
	for i, c := range runs {
		for _, l := range c.removed {
			if n := kind.declares(l); n != "" {
				removed[n] = l
			}
		}
		for _, l := range c.added {
			if n := kind.declares(l); n != "" {
				if _, ok := added[n]; !ok {
					added[n], where[n] = l, i
				}
			}
		}
	}
	var fresh, gone []string
	for i := range runs {
		for _, l := range runs[i].added {
			if n := kind.declares(l); n != "" && where[n] == i && removed[n] == "" && !slices.Contains(fresh, n) {
				fresh = append(fresh, n)
			}
		}
		for _, l := range runs[i].removed {
			if n := kind.declares(l); n != "" && added[n] == "" && !slices.Contains(gone, n) {
				gone = append(gone, n)
			}
		}
	}
	renamed := map[string]string{} // new → old
	for _, old := range gone {
		best, score := "", -1
		for _, n := range fresh {
			if _, taken := renamed[n]; taken {
				continue
			}
			if s := likeness(kind, removed[old], old, added[n], n); s > score {
				best, score = n, s
			}
		}
		if best != "" {
			renamed[best] = old
		}
	}
	olds := map[string]bool{}
	for _, n := range fresh {
		c := &runs[where[n]]
		if old, ok := renamed[n]; ok {
			c.renames = append(c.renames, [2]string{old, n})
			olds[old] = true
		} else {
			c.declares = append(c.declares, n)
		}
	}
	// A renamed declaration's old line, cut off from its new one into a run
	// of its own, is part of the rename, not a change of its own.
	kept := runs[:0]
	for _, c := range runs {
		if len(c.declares) == 0 && len(c.renames) == 0 {
			c.removed = slices.DeleteFunc(c.removed, func(l string) bool { return olds[kind.declares(l)] })
			if allTrivial(kind, c.removed) && allTrivial(kind, c.added) {
				continue
			}
		}
		kept = append(kept, c)
	}
	runs = kept
	for i := range runs {
		if runs[i].where != "" {
			continue
		}
		for _, l := range append(append([]string{}, runs[i].added...), runs[i].removed...) {
			if n := kind.declares(l); n != "" {
				runs[i].where = n
				break
			}
		}
	}
	return runs
}

// likeness counts the tokens two declaration lines share in place, their
// names left out.
func likeness(kind code, a, aName, b, bName string) int {
	ta, tb := lineTokens(kind, a), lineTokens(kind, b)
	n := 0
	for i := 0; i < len(ta) && i < len(tb); i++ {
		if ta[i] == tb[i] && ta[i] != aName {
			n++
		}
	}
	return n
}

// place names a change for a reviewer: "Add (calc/calc.go:5)".
func (c change) place() string {
	if c.where != "" {
		return fmt.Sprintf("%s (%s:%d)", c.where, c.file, c.line)
	}
	return fmt.Sprintf("%s:%d", c.file, c.line)
}

// purposeVerdict is what the patch did to each of the blame's changes.
type purposeVerdict struct {
	changes  int      // the blame's changes to code
	thrown   []string // what the culprit declared or renamed that the patch takes back
	restored []string // behaviour changes the patch undoes
	kept     []string // what lives on
}

// revert reports a patch that throws the culprit's purpose away.
func (p purposeVerdict) revert() bool {
	return len(p.thrown) > 0 || p.changes > 0 && len(p.kept) == 0
}

// judgePurpose holds the patch up against the blame's changes. declaredNow
// tells whether a name is declared in a file of the patched tree. A name
// the culprit declared is thrown away when the patch removes it, and also
// when it undoes every change of the culprit that used it (the new code is
// left declared but unused: "totals add tax" undone, withTax kept).
func judgePurpose(changes []change, patch []unidiff.File, declaredNow func(name string) bool) purposeVerdict {
	v := purposeVerdict{changes: len(changes)}
	undone := make([]bool, len(changes))
	for i, c := range changes {
		undone[i] = len(c.declares) == 0 && len(c.renames) == 0 && undoes(patch, c)
	}
	for i, c := range changes {
		var lost []string
		for _, n := range c.declares {
			switch uses, all := usesOf(changes, undone, i, n); {
			case !declaredNow(n):
				lost = append(lost, fmt.Sprintf("removes %s, which it added", n))
			case uses > 0 && all:
				lost = append(lost, fmt.Sprintf("undoes every use it made of %s, which it added, leaving it unused", n))
			}
		}
		for _, r := range c.renames {
			if !declaredNow(r[1]) && declaredNow(r[0]) {
				lost = append(lost, fmt.Sprintf("renames %s back to %s", r[1], r[0]))
			}
		}
		switch {
		case len(lost) > 0:
			v.thrown = append(v.thrown, lost...)
		case undone[i]:
			v.restored = append(v.restored, c.place())
		default:
			v.kept = append(v.kept, c.summary())
		}
	}
	return v
}

// usesOf counts the other changes whose added lines use name, and reports
// whether the patch undoes every one of them.
func usesOf(changes []change, undone []bool, self int, name string) (uses int, allUndone bool) {
	allUndone = true
	for j, c := range changes {
		if j == self || !slices.Contains(tokens(c.kind, c.added), name) {
			continue
		}
		uses++
		allUndone = allUndone && undone[j]
	}
	return uses, allUndone
}

func (c change) summary() string {
	var parts []string
	for _, n := range c.declares {
		parts = append(parts, "new "+n)
	}
	for _, r := range c.renames {
		parts = append(parts, fmt.Sprintf("%s renamed %s", r[0], r[1]))
	}
	if len(parts) == 0 {
		return "the change to " + c.place()
	}
	return strings.Join(parts, ", ") + " (" + c.file + ")"
}

// undoes reports a patch that takes the change's lines out of its file and
// puts back the lines the change replaced, within one run of its own
// changed lines. Lines are compared in their canonical form (pkg/canon): a
// comparison with a constant put back in other words (`> 99999` for the
// culprit's `>= 100000` undone) is put back all the same.
func undoes(patch []unidiff.File, c change) bool {
	kind := c.kind
	take := canonTokens(kind, c.added)
	give := canonTokens(kind, c.removed)
	for _, f := range patch {
		if f.OldPath != c.file {
			continue
		}
		for _, h := range f.Hunks {
			var removed, added []string
			check := func() bool {
				return (len(take) == 0 || containsAlpha(canonTokens(kind, removed), take)) &&
					(len(give) == 0 || containsAlpha(canonTokens(kind, added), give))
			}
			for _, l := range h.Lines {
				switch l.Kind {
				case '+':
					added = append(added, l.Text)
				case '-':
					removed = append(removed, l.Text)
				default:
					if (len(removed) > 0 || len(added) > 0) && check() {
						return true
					}
					removed, added = nil, nil
				}
			}
			if (len(removed) > 0 || len(added) > 0) && check() {
				return true
			}
		}
	}
	return false
}

// tokens cuts code into its tokens: identifiers, numbers, strings and single
// punctuation; spacing and comments are dropped.
func tokens(kind code, lines []string) []string {
	var out []string
	for _, line := range lines {
		out = append(out, lineTokens(kind, line)...)
	}
	return out
}

// canonTokens are the lines' tokens, each line's in its canonical form;
// lines with nothing to say (blank, a brace, a comment) are left out, so
// that where a diff puts a closing brace does not decide.
func canonTokens(kind code, lines []string) []string {
	var out []string
	for _, line := range lines {
		toks := lineTokens(kind, line)
		if allTrivial(kind, []string{line}) {
			continue
		}
		out = append(out, canon.Comparisons(toks)...)
	}
	return out
}

// lineTokens is a line's tokens (canon.Tokens) without its comments: the
// kind's line comments, /* … */ within the line, and, in a language of //
// comments, a line that starts with "*": the body or the end of a /* … */
// block whose opening is on another line (a doc comment's " * @param").
func lineTokens(kind code, s string) []string {
	if slices.Contains(kind.comments, "//") && strings.HasPrefix(strings.TrimSpace(s), "*") {
		return nil
	}
	return canon.TokensWithout(s, func(rest string) int {
		switch {
		case kind.commentAt(rest):
			return len(rest)
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				return len(rest)
			}
			return end + 4
		}
		return 0
	})
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// containsAlpha reports whether want appears in hay as a run of tokens,
// equal up to a consistent renaming of identifiers (what a rewording by new
// local names leaves the same).
func containsAlpha(hay, want []string) bool {
	w := alpha(want)
	for i := 0; i+len(want) <= len(hay); i++ {
		if equalTokens(alpha(hay[i:i+len(want)]), w) {
			return true
		}
	}
	return false
}

// alpha replaces each identifier by the order of its first appearance;
// keywords, numbers, strings and punctuation stay.
func alpha(toks []string) []string {
	seen := map[string]int{}
	out := make([]string, len(toks))
	for i, t := range toks {
		if !isIdent(t) || keywords[t] {
			out[i] = t
			continue
		}
		n, ok := seen[t]
		if !ok {
			n = len(seen)
			seen[t] = n
		}
		out[i] = fmt.Sprintf("\x00%d", n)
	}
	return out
}

func isIdent(t string) bool {
	return t != "" && isWord(t[0]) && (t[0] < '0' || t[0] > '9')
}

func equalTokens(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// keywords keep their meaning under renaming: turning "&&" into "||" or
// "true" into "false" is not a rewording.
var keywords = map[string]bool{
	"true": true, "false": true, "nil": true, "null": true, "undefined": true, "None": true, "True": true, "False": true,
	"return": true, "if": true, "else": true, "for": true, "while": true, "range": true, "in": true, "of": true,
	"not": true, "and": true, "or": true, "is": true, "func": true, "def": true, "function": true, "const": true,
	"let": true, "var": true, "new": true, "this": true, "self": true, "break": true, "continue": true,
	"typeof": true, "instanceof": true, "len": true, "switch": true, "case": true, "default": true,
}
