// Package unidiff reads unified diffs: the output of `git diff`, `git show`
// and `diff -u`, and patches written by hand or by a model.
//
// The parser is tolerant. Text around the diffs (a commit message, a note
// after them) is ignored, a hunk cut short by truncated output is kept up to
// its last complete line, "\ No newline at end of file" markers are skipped
// and CRLF line ends are read as LF. It reads git's extended headers: the
// "diff --git" line, quoted names, renames, created and deleted files and
// binary changes; plain diffs without git's header (with or without
// timestamps after the names) are read from their ---/+++ lines.
package unidiff

import (
	"fmt"
	"strconv"
	"strings"
)

// File is one file's part of a diff.
type File struct {
	OldPath string // the name before the change; "" when the file is created
	NewPath string // the name after the change; "" when the file is deleted
	Binary  bool   // a binary change: git shows no hunks for it
	Hunks   []Hunk
}

// Path is the file's name after the change, or before it for a deletion.
func (f File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Paths are the file's names before and after the change, without repeats.
func (f File) Paths() []string {
	switch {
	case f.OldPath == "":
		return []string{f.NewPath}
	case f.NewPath == "" || f.NewPath == f.OldPath:
		return []string{f.OldPath}
	}
	return []string{f.OldPath, f.NewPath}
}

// Changes are the file's added and removed lines, in order; context lines
// are left out.
func (f File) Changes() []Line {
	var out []Line
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind != ' ' {
				out = append(out, l)
			}
		}
	}
	return out
}

// Hunk is one "@@" section of a file's diff. The counts are those of its
// header; a hunk cut short holds fewer lines than they announce.
type Hunk struct {
	OldStart, OldCount int
	NewStart, NewCount int
	// Section is the text git shows after the header's second "@@": the
	// line above the hunk that it takes for the enclosing function's
	// ("func Add(x, y int) int {"), "" when it shows none.
	Section string
	Lines   []Line
}

// NewSide is the hunk's text in the new file: its context and added lines.
func (h Hunk) NewSide() []string { return h.side('+') }

// OldSide is the hunk's text in the old file: its context and removed lines.
func (h Hunk) OldSide() []string { return h.side('-') }

func (h Hunk) side(kind byte) []string {
	var out []string
	for _, l := range h.Lines {
		if l.Kind == ' ' || l.Kind == kind {
			out = append(out, l.Text)
		}
	}
	return out
}

// Changed counts the hunk's added and removed lines.
func (h Hunk) Changed() (added, removed int) {
	for _, l := range h.Lines {
		switch l.Kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

// Line is one line of a hunk. Kind is ' ' (context), '+' (added) or '-'
// (removed); Text is the line without that prefix. NewLine is the line's
// number in the new file (context and added lines) and OldLine its number in
// the old file (context and removed lines); 0 where it has none.
type Line struct {
	Kind    byte
	Text    string
	OldLine int
	NewLine int
}

// Added reports whether the line was added.
func (l Line) Added() bool { return l.Kind == '+' }

// Removed reports whether the line was removed.
func (l Line) Removed() bool { return l.Kind == '-' }

// Number is the line's number in the file it is part of: the old file for a
// removed line, the new one for an added or context line.
func (l Line) Number() int {
	if l.Kind == '-' {
		return l.OldLine
	}
	return l.NewLine
}

// Parse reads the files of the diffs in text.
//
// A malformed "@@ " header or a file whose name cannot be read stops it: it
// returns the files read until then (the one with the bad header included,
// with its hunks before it; a nameless file is never returned) and an error
// naming the line where the problem is.
func Parse(text string) ([]File, error) {
	p := parser{lines: splitLines(text)}
	err := p.run()
	return p.files, err
}

// splitLines cuts text into lines without their "\n" or "\r\n" ends; a
// final line end does not start another line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

type parser struct {
	lines []string
	files []File

	cur      *File
	curStart int  // the line (from 1) where cur starts
	plusSeen bool // cur's +++ line was read
	inBody   bool // a hunk header of cur was read: no more file headers
}

func (p *parser) run() error {
	for i := 0; i < len(p.lines); i++ {
		l := p.lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			if err := p.start(i); err != nil {
				return err
			}
			p.cur.OldPath, p.cur.NewPath = gitHeaderPaths(strings.TrimPrefix(l, "diff --git "))
		case strings.HasPrefix(l, "--- ") && i+1 < len(p.lines) && strings.HasPrefix(p.lines[i+1], "+++ "):
			if p.cur == nil || p.plusSeen || p.inBody {
				// A plain diff's file, without git's header.
				if err := p.start(i); err != nil {
					return err
				}
			}
			p.cur.OldPath = diffPath(strings.TrimPrefix(l, "--- "))
			p.cur.NewPath = diffPath(strings.TrimPrefix(p.lines[i+1], "+++ "))
			p.plusSeen = true
			i++
		case p.cur == nil:
			// Text before the first file (a commit message): ignored.
		case strings.HasPrefix(l, "@@ "):
			h, next, err := parseHunk(p.lines, i)
			if err != nil {
				_ = p.finish() // the file is kept unless it has no name
				return fmt.Errorf("parse diff: line %d: %w", i+1, err)
			}
			p.inBody = true
			if len(h.Lines) > 0 {
				p.cur.Hunks = append(p.cur.Hunks, h)
			}
			i = next - 1
		case p.inBody:
			// Text after the file's hunks: ignored.
		default:
			p.header(l)
		}
	}
	return p.finish()
}

// start ends the current file and begins one at line i (from 0).
func (p *parser) start(i int) error {
	if err := p.finish(); err != nil {
		return err
	}
	p.cur, p.curStart, p.plusSeen, p.inBody = &File{}, i+1, false, false
	return nil
}

// finish adds the current file to the result, if there is one and it has a
// name.
func (p *parser) finish() error {
	f := p.cur
	p.cur = nil
	if f == nil {
		return nil
	}
	if f.OldPath == "" && f.NewPath == "" {
		return fmt.Errorf("parse diff: line %d: the file has no name", p.curStart)
	}
	p.files = append(p.files, *f)
	return nil
}

// header reads a line of git's extended header, before the file's hunks.
// Other lines are ignored, and so are a --- or +++ line without the other
// (the output was cut between them).
func (p *parser) header(l string) {
	f := p.cur
	switch {
	case strings.HasPrefix(l, "new file mode"):
		f.OldPath = ""
	case strings.HasPrefix(l, "deleted file mode"):
		f.NewPath = ""
	case strings.HasPrefix(l, "rename from "):
		f.OldPath = unquote(strings.TrimPrefix(l, "rename from "))
	case strings.HasPrefix(l, "rename to "):
		f.NewPath = unquote(strings.TrimPrefix(l, "rename to "))
	case strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "GIT binary patch"):
		f.Binary = true
	}
}

// parseHunk reads the hunk whose header is lines[i]. It returns the hunk and
// the index of the first line after it. The hunk ends when its header's
// counts are used up or at the first line that cannot be part of it: other
// text, or the end of a truncated output.
func parseHunk(lines []string, i int) (Hunk, int, error) {
	h, err := hunkHeader(lines[i])
	if err != nil {
		return Hunk{}, i, err
	}
	oldN, newN := h.OldStart, h.NewStart
	oldLeft, newLeft := h.OldCount, h.NewCount
	j := i + 1
	for ; j < len(lines) && (oldLeft > 0 || newLeft > 0); j++ {
		l := lines[j]
		if strings.HasPrefix(l, `\`) { // "\ No newline at end of file"
			continue
		}
		kind, text := byte(' '), ""
		if l != "" {
			kind, text = l[0], l[1:]
		} else if !(oldLeft == 1 && newLeft == 1) && !continuesHunk(lines, j+1) {
			// An empty line is a context line whose space was lost, unless
			// it ends the hunk: then it is the blank line after it.
			return h, j, nil
		}
		switch {
		case kind == ' ' && oldLeft > 0 && newLeft > 0:
			h.Lines = append(h.Lines, Line{Kind: ' ', Text: text, OldLine: oldN, NewLine: newN})
			oldN++
			newN++
			oldLeft--
			newLeft--
		case kind == '+' && newLeft > 0:
			h.Lines = append(h.Lines, Line{Kind: '+', Text: text, NewLine: newN})
			newN++
			newLeft--
		case kind == '-' && oldLeft > 0:
			h.Lines = append(h.Lines, Line{Kind: '-', Text: text, OldLine: oldN})
			oldN++
			oldLeft--
		default:
			return h, j, nil // more lines than the header counts, or other text
		}
	}
	for j < len(lines) && strings.HasPrefix(lines[j], `\`) {
		j++
	}
	return h, j, nil
}

// continuesHunk reports whether lines[j] can be a line of a hunk.
func continuesHunk(lines []string, j int) bool {
	if j >= len(lines) {
		return false
	}
	l := lines[j]
	return l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '\\'
}

// hunkHeader reads "@@ -o[,ol] +n[,nl] @@ [section]".
func hunkHeader(line string) (Hunk, error) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") || f[3] != "@@" {
		return Hunk{}, fmt.Errorf("malformed hunk header %q", line)
	}
	var h Hunk
	var err error
	if h.OldStart, h.OldCount, err = hunkRange(f[1][1:]); err != nil {
		return Hunk{}, fmt.Errorf("malformed hunk header %q: %w", line, err)
	}
	if h.NewStart, h.NewCount, err = hunkRange(f[2][1:]); err != nil {
		return Hunk{}, fmt.Errorf("malformed hunk header %q: %w", line, err)
	}
	if _, rest, ok := strings.Cut(line[2:], "@@"); ok {
		h.Section = strings.TrimPrefix(rest, " ")
	}
	return h, nil
}

// hunkRange reads "start[,count]"; the count is 1 when it is left out.
func hunkRange(s string) (start, count int, err error) {
	a, b, ok := strings.Cut(s, ",")
	if start, err = number(a); err != nil {
		return 0, 0, err
	}
	count = 1
	if ok {
		if count, err = number(b); err != nil {
			return 0, 0, err
		}
	}
	return start, count, nil
}

// number reads a non-negative decimal number.
func number(s string) (int, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a line number or count", s)
	}
	return strconv.Atoi(s)
}

// gitHeaderPaths reads the names of a "diff --git" line: "a/x b/y", with
// either name quoted when it has unusual characters. Unquoted names with
// spaces are ambiguous there; the ---/+++ and rename lines that follow
// correct them. Names it cannot read are "".
func gitHeaderPaths(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", ""
		}
		return strings.TrimPrefix(unquote(q), "a/"), strings.TrimPrefix(unquote(strings.TrimPrefix(s[len(q):], " ")), "b/")
	}
	if i := strings.LastIndex(s, ` "b/`); i >= 0 && strings.HasSuffix(s, `"`) {
		return strings.TrimPrefix(s[:i], "a/"), strings.TrimPrefix(unquote(s[i+1:]), "b/")
	}
	if i := strings.Index(s, " b/"); i >= 0 && strings.HasPrefix(s, "a/") {
		return s[2:i], s[i+3:]
	}
	// No a/ and b/ prefixes (diff.noprefix): the name is unambiguous only
	// when it is the same on both sides.
	if n := len(s); n%2 == 1 && s[n/2] == ' ' && s[:n/2] == s[n/2+1:] {
		return s[:n/2], s[n/2+1:]
	}
	return "", ""
}

// diffPath reads the name of a ---/+++ line: "" for /dev/null, without the
// a/ or b/ prefix and the timestamp of plain diffs.
func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i] // a timestamp follows in plain diffs
	}
	s = unquote(strings.TrimSpace(s))
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// unquote reads a name git quoted ("a/caf\303\251.go"); other names are
// returned as they are.
func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}
