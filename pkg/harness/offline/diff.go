package offline

import (
	"regexp"
	"strconv"
	"strings"
)

// FileDiff is one file's change in a unified diff.
type FileDiff struct {
	Path    string // the new path ("" when the file was deleted)
	OldPath string // the old path ("" when the file was created)
	Hunks   []Hunk
}

// Hunk is one "@@" section of a unified diff.
type Hunk struct {
	OldStart, OldCount int
	NewStart, NewCount int
	Lines              []DiffLine
}

// DiffLine is one line of a hunk. Kind is ' ' (context), '+' (added) or '-'
// (removed). NewLine is its number in the new file (context and added lines),
// OldLine in the old file (context and removed lines); 0 where it has none.
type DiffLine struct {
	Kind    byte
	Text    string
	OldLine int
	NewLine int
}

// NewSide is the hunk's text in the new file: context and added lines.
func (h Hunk) NewSide() []string { return h.side('+') }

// OldSide is the hunk's text in the old file: context and removed lines.
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

var hunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// ParseDiff extracts the files and hunks of the unified diffs in text. Text
// around the diff (a commit message, headers) is ignored, and so is a hunk
// cut short by truncation after its last complete line.
func ParseDiff(text string) []FileDiff {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var files []FileDiff
	var cur *FileDiff
	flush := func() {
		if cur != nil && (cur.Path != "" || cur.OldPath != "") {
			files = append(files, *cur)
		}
		cur = nil
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
			cur = &FileDiff{}
			if a, b, ok := gitPaths(strings.TrimPrefix(l, "diff --git ")); ok {
				cur.OldPath, cur.Path = a, b
			}
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			if cur == nil || len(cur.Hunks) > 0 {
				flush()
				cur = &FileDiff{}
			}
			cur.OldPath = diffPath(strings.TrimPrefix(l, "--- "), "a/")
			cur.Path = diffPath(strings.TrimPrefix(lines[i+1], "+++ "), "b/")
			i++
		case hunkRE.MatchString(l):
			if cur == nil {
				continue
			}
			h, next := parseHunk(lines, i)
			if len(h.Lines) > 0 {
				cur.Hunks = append(cur.Hunks, h)
			}
			i = next - 1
		}
	}
	flush()
	return files
}

// parseHunk reads the hunk whose header is lines[i]; it returns the hunk and
// the index of the first line after it.
func parseHunk(lines []string, i int) (Hunk, int) {
	m := hunkRE.FindStringSubmatch(lines[i])
	num := func(s string, def int) int {
		if s == "" {
			return def
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	h := Hunk{OldStart: num(m[1], 0), OldCount: num(m[2], 1), NewStart: num(m[3], 0), NewCount: num(m[4], 1)}
	oldN, newN := h.OldStart, h.NewStart
	oldLeft, newLeft := h.OldCount, h.NewCount
	j := i + 1
	for ; j < len(lines) && (oldLeft > 0 || newLeft > 0); j++ {
		l := lines[j]
		if strings.HasPrefix(l, `\`) { // "\ No newline at end of file"
			continue
		}
		kind := byte(' ')
		text := ""
		if l != "" {
			kind, text = l[0], l[1:]
		} else if !(oldLeft == 1 && newLeft == 1) && !continuesHunk(lines, j+1) {
			return h, j // an empty line ends the hunk unless more of it follows
		}
		switch kind {
		case ' ':
			if oldLeft == 0 || newLeft == 0 {
				return h, j
			}
			h.Lines = append(h.Lines, DiffLine{Kind: ' ', Text: text, OldLine: oldN, NewLine: newN})
			oldN++
			newN++
			oldLeft--
			newLeft--
		case '+':
			if newLeft == 0 {
				return h, j
			}
			h.Lines = append(h.Lines, DiffLine{Kind: '+', Text: text, NewLine: newN})
			newN++
			newLeft--
		case '-':
			if oldLeft == 0 {
				return h, j
			}
			h.Lines = append(h.Lines, DiffLine{Kind: '-', Text: text, OldLine: oldN})
			oldN++
			oldLeft--
		default:
			return h, j // truncated or followed by other text
		}
	}
	for j < len(lines) && strings.HasPrefix(lines[j], `\`) {
		j++
	}
	return h, j
}

func continuesHunk(lines []string, j int) bool {
	if j >= len(lines) {
		return false
	}
	l := lines[j]
	return l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' || l[0] == '\\'
}

// gitPaths splits "a/x b/x" (paths without spaces, the common case).
func gitPaths(s string) (string, string, bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return "", "", false
	}
	return strings.TrimPrefix(f[0], "a/"), strings.TrimPrefix(f[1], "b/"), true
}

func diffPath(s, prefix string) string {
	if t, _, ok := strings.Cut(s, "\t"); ok {
		s = t
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return ""
	}
	return strings.TrimPrefix(s, prefix)
}

// isGoSource reports whether path is a non-test Go file.
func isGoSource(path string) bool {
	return strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
}
