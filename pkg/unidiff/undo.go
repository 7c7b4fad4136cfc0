package unidiff

import (
	"fmt"
	"strings"
)

// Verb says what the diff does to the file: "adds", "deletes", "renames"
// or "edits".
func (f File) Verb() string {
	switch {
	case f.OldPath == "":
		return "adds"
	case f.NewPath == "":
		return "deletes"
	case f.OldPath != f.NewPath:
		return "renames"
	}
	return "edits"
}

// Undo rebuilds the file's text before the diff from its text after it
// (CRLF line ends read as LF), checking that the hunks' new side is what
// the text holds: a diff that does not match it is an error.
func (f File) Undo(after string) (string, error) {
	lines := strings.Split(strings.ReplaceAll(after, "\r\n", "\n"), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var before []string
	next := 0 // the first line of after not yet copied
	for i, h := range f.Hunks {
		start := h.NewStart - 1
		if h.NewCount == 0 {
			start = h.NewStart // an empty new side sits after that line
		}
		side := h.NewSide()
		if start < next || start+len(side) > len(lines) {
			return "", fmt.Errorf("hunk %d of the diff is not where the file has room for it", i+1)
		}
		for j, l := range side {
			if lines[start+j] != l {
				return "", fmt.Errorf("hunk %d of the diff does not match the file at line %d", i+1, start+j+1)
			}
		}
		before = append(before, lines[next:start]...)
		before = append(before, h.OldSide()...)
		next = start + len(side)
	}
	before = append(before, lines[next:]...)
	return strings.Join(before, "\n") + "\n", nil
}
