package validators

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// FileDiff is one file's part of a unified diff (git's flavour).
type FileDiff struct {
	OldPath string // "" for a new file
	NewPath string // "" for a deleted file
	Binary  bool
	Lines   []DiffLine // the changed lines, in order; context lines are not kept
}

// Path is the file's name after the change, or before it for a deletion.
func (f FileDiff) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Paths are the file's names before and after, without repeats.
func (f FileDiff) Paths() []string {
	switch {
	case f.OldPath == "":
		return []string{f.NewPath}
	case f.NewPath == "" || f.NewPath == f.OldPath:
		return []string{f.OldPath}
	}
	return []string{f.OldPath, f.NewPath}
}

// DiffLine is one added or removed line.
type DiffLine struct {
	Added bool   // false: removed
	Line  int    // in the new file for an added line, in the old one for a removed line
	Text  string // without the leading '+' or '-'
}

// ParseDiff reads a unified diff as `git diff` writes it. Only what the gates
// need is kept: the files' names and their added and removed lines.
func ParseDiff(patch string) ([]FileDiff, error) {
	var (
		files          []FileDiff
		cur            *FileDiff
		oldLn, newLn   int
		oldLeft, newLf int  // lines left in the current hunk
		plusSeen       bool // the current file's +++ line was read
	)
	sc := bufio.NewScanner(strings.NewReader(patch))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		inHunk := cur != nil && (oldLeft > 0 || newLf > 0)
		switch {
		case inHunk && strings.HasPrefix(line, "+"):
			cur.Lines = append(cur.Lines, DiffLine{Added: true, Line: newLn, Text: line[1:]})
			newLn++
			newLf--
			continue
		case inHunk && strings.HasPrefix(line, "-"):
			cur.Lines = append(cur.Lines, DiffLine{Line: oldLn, Text: line[1:]})
			oldLn++
			oldLeft--
			continue
		case inHunk && (strings.HasPrefix(line, " ") || line == ""):
			oldLn++
			newLn++
			oldLeft--
			newLf--
			continue
		case strings.HasPrefix(line, `\ `): // "\ No newline at end of file"
			continue
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			files = append(files, FileDiff{})
			cur = &files[len(files)-1]
			cur.OldPath, cur.NewPath = gitHeaderPaths(strings.TrimPrefix(line, "diff --git "))
			oldLeft, newLf, plusSeen = 0, 0, false
		case (cur == nil || plusSeen) && strings.HasPrefix(line, "--- "):
			// A plain unified diff, without git's header.
			files = append(files, FileDiff{})
			cur = &files[len(files)-1]
			cur.OldPath = diffPath(strings.TrimPrefix(line, "--- "))
			oldLeft, newLf, plusSeen = 0, 0, false
		case cur == nil:
			// Text before the first file (a commit message): ignored.
		case strings.HasPrefix(line, "--- "):
			cur.OldPath = diffPath(strings.TrimPrefix(line, "--- "))
		case strings.HasPrefix(line, "+++ "):
			cur.NewPath = diffPath(strings.TrimPrefix(line, "+++ "))
			plusSeen = true
		case strings.HasPrefix(line, "new file mode"):
			cur.OldPath = ""
		case strings.HasPrefix(line, "deleted file mode"):
			cur.NewPath = ""
		case strings.HasPrefix(line, "rename from "):
			cur.OldPath = strings.TrimPrefix(line, "rename from ")
		case strings.HasPrefix(line, "rename to "):
			cur.NewPath = strings.TrimPrefix(line, "rename to ")
		case strings.HasPrefix(line, "Binary files ") || strings.HasPrefix(line, "GIT binary patch"):
			cur.Binary = true
		case strings.HasPrefix(line, "@@ "):
			o, ol, nw, nl, err := hunkHeader(line)
			if err != nil {
				return nil, fmt.Errorf("parse diff line %d: %w", n, err)
			}
			oldLn, oldLeft, newLn, newLf = o, ol, nw, nl
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read diff: %w", err)
	}
	for _, f := range files {
		if f.OldPath == "" && f.NewPath == "" {
			return nil, fmt.Errorf("parse diff: a file has no name")
		}
	}
	return files, nil
}

// gitHeaderPaths reads "a/x b/x" from a diff --git line. Names with spaces
// are ambiguous there; the ---/+++ and rename lines that follow correct them.
func gitHeaderPaths(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		return "", "" // quoted names: left to the ---/+++ lines
	}
	if i := strings.Index(s, " b/"); i >= 0 && strings.HasPrefix(s, "a/") {
		return s[2:i], s[i+3:]
	}
	return "", ""
}

func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i] // a timestamp follows in plain diffs
	}
	s = strings.TrimSpace(s)
	if uq, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		s = uq
	}
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// hunkHeader reads "@@ -o,ol +n,nl @@".
func hunkHeader(line string) (o, ol, n, nl int, err error) {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, 0, fmt.Errorf("malformed hunk header %q", line)
	}
	if o, ol, err = rangeOf(f[1][1:]); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("hunk header %q: %w", line, err)
	}
	if n, nl, err = rangeOf(f[2][1:]); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("hunk header %q: %w", line, err)
	}
	return o, ol, n, nl, nil
}

func rangeOf(s string) (start, count int, err error) {
	a, b, ok := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	count = 1
	if ok {
		if count, err = strconv.Atoi(b); err != nil {
			return 0, 0, err
		}
	}
	return start, count, nil
}
