// Package linebound bounds the lines a model adds to a repository's files.
// Parsers (go/parser, tree-sitter, the gates' lexers, the compilers the
// agent's checks run) take time and memory that grow with a line's length
// and with how deep its brackets nest: one line of three million
// parentheses took a parser past a gigabyte. Whatever adds model text to a
// file (the agent's edit, a patch at the gates) measures it here first, from
// the text alone, and refuses it unread when it is out of bounds.
package linebound

import "fmt"

const (
	// MaxBytes bounds each added line. Code written by hand stays far
	// below it (formatters wrap at 80 to 120 columns); a longer line is
	// minified or generated text, or an attack on the parsers, never a
	// repair.
	MaxBytes = 8 << 10
	// MaxNesting bounds how deep the brackets ( [ { that added lines open
	// may nest, counted over the lines in order (a closer with nothing
	// open counts for nothing, so that lines closing a file's existing
	// blocks lend no credit). Code nests a few dozen deep at most.
	MaxNesting = 256
)

// Depth carries the nesting of added lines from one line to the next; its
// zero value starts at no bracket open.
type Depth struct{ open int }

// Line measures one added line, carrying the depth; it says why the line
// is out of bounds ("" when it is not).
func (d *Depth) Line(text string) string {
	if n := len(text); n > MaxBytes {
		return fmt.Sprintf("a line of %d bytes, more than the %d an added line may have", n, MaxBytes)
	}
	if d.Nest(text) {
		return fmt.Sprintf("brackets nested more than %d deep", MaxNesting)
	}
	return ""
}

// Nest carries the depth through one line, whatever its length, and
// reports whether it passed MaxNesting.
func (d *Depth) Nest(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '(', '[', '{':
			d.open++
			if d.open > MaxNesting {
				return true
			}
		case ')', ']', '}':
			if d.open > 0 {
				d.open--
			}
		}
	}
	return false
}
