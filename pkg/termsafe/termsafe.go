// Package termsafe makes text from outside redfix safe to print on a
// terminal: test names and output, file paths, commit subjects and
// authors, CI reports, what a model wrote. A terminal obeys the control
// characters and escape sequences in what it prints: OSC 52 writes the
// clipboard, OSC 8 makes a link whose text hides its target, CSI moves the
// cursor and rewrites what is already on the screen, DCS talks to the
// terminal itself. String removes them all and keeps newlines and tabs.
package termsafe

import (
	"io"
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18
	sub = 0x1a
	st  = 0x9c // C1 STRING TERMINATOR
)

// String is s with every control character and escape sequence removed,
// newlines and tabs kept:
//   - escape sequences as a whole: CSI (ESC [ parameters, intermediates,
//     final byte), the control strings OSC, DCS, SOS, PM and APC (ESC ],
//     P, X, ^, _ up to BEL, ST, another ESC, CAN or SUB), and the other
//     escapes (ESC 7, ESC ( B, ESC # 8);
//   - the same introduced by a C1 control (0x9B is CSI, 0x9D OSC, …),
//     whether UTF-8 encoded (U+009B) or a single byte;
//   - every other C0 control (carriage return and backspace included,
//     which can hide what was printed), DEL and C1 control.
//
// A control string with no terminator loses its introducer only: the rest
// is shown as text. Bytes that are not UTF-8 become U+FFFD. What String
// returns holds no byte below 0x20 but newline and tab, no DEL and no C1
// control, in either encoding.
func String(s string) string {
	if printable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c, n := control(s, i)
		switch {
		case n == 0: // an ordinary character
			r, w := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && w == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+w])
			}
			i += w
		case c == '\n' || c == '\t':
			b.WriteByte(byte(c))
			i += n
		case c == esc:
			i = skipEscape(s, i+n)
		case c >= 0x80 && c <= 0x9f: // C1: as ESC and the byte 0x40 below it
			i = skipSequence(s, i+n, byte(c-0x40))
		default: // another C0 control, or DEL
			i += n
		}
	}
	return b.String()
}

// printable reports whether s is printable ASCII, newlines and tabs only.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// control is the control character at s[i] and its length in bytes: a C0
// control or DEL (one byte), or a C1 control, UTF-8 encoded (two bytes) or
// a single byte that is not UTF-8. n is 0 when s[i] starts no control.
func control(s string, i int) (c rune, n int) {
	if b := s[i]; b < 0x20 || b == 0x7f {
		return rune(b), 1
	} else if b < 0x80 {
		return 0, 0
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && w == 1 && s[i] <= 0x9f:
		return rune(s[i]), 1
	case r >= 0x80 && r <= 0x9f:
		return r, w
	}
	return 0, 0
}

// skipEscape skips what follows an ESC that ends at i and returns where the
// text resumes.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	c := s[i]
	switch {
	case c >= 0x20 && c <= 0x2f: // intermediates, then a final byte
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j
	case c >= 0x30 && c <= 0x7e:
		return skipSequence(s, i+1, c)
	}
	return i // ESC before a control or a non-ASCII character: ESC alone
}

// skipSequence skips the rest of the sequence whose introducer (ESC kind,
// or the C1 control kind+0x40) ends at i, and returns where the text
// resumes.
func skipSequence(s string, i int, kind byte) int {
	switch kind {
	case '[': // CSI: parameters, intermediates, a final byte
		j := i
		for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
			j++
		}
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			j++
		}
		return j
	case ']', 'P', 'X', '^', '_': // a control string, up to its terminator
		for j := i; j < len(s); {
			c, n := control(s, j)
			switch {
			case c == bel || c == st:
				return j + n
			case c == esc && j+1 < len(s) && s[j+1] == '\\':
				return j + 2
			case c == esc || c == can || c == sub:
				return j // the terminal abandons the string here
			}
			if n == 0 {
				_, n = utf8.DecodeRuneInString(s[j:])
			}
			j += n
		}
		return i // no terminator: the introducer alone
	}
	return i // a control of its own: nothing more to skip
}

// Writer is an io.Writer that writes through String. Each Write is
// cleaned on its own: a sequence split across two writes loses its
// control characters all the same, though the rest of it may show as
// text.
type Writer struct {
	w io.Writer
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes String(p) and reports all of p written.
func (w *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSON is a JSON text, as encoding/json writes it, with DEL and the C1
// controls (U+0080–U+009F) written as \u escapes: encoding/json escapes the
// C0 controls and replaces bytes that are not UTF-8, but writes these as
// they are, and a terminal obeys U+009B as CSI. The value is the same:
// outside strings a JSON text is ASCII without DEL, so only strings change,
// and only in how they are written.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] != 0x7f && b[i] != 0xc2 {
		i++
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	const hex = "0123456789abcdef"
	for ; i < len(b); i++ {
		switch {
		case b[i] == 0x7f:
			out = append(out, `\u007f`...)
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			out = append(out, '\\', 'u', '0', '0', hex[b[i+1]>>4], hex[b[i+1]&15])
			i++
		default:
			out = append(out, b[i])
		}
	}
	return out
}

// JSONWriter is an io.Writer for JSON that writes through JSON. Each Write
// must hold whole characters, as json.Encoder's do.
type JSONWriter struct {
	w io.Writer
}

// NewJSONWriter returns a JSONWriter writing to w.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{w: w} }

// Write writes JSON(p) and reports all of p written.
func (w *JSONWriter) Write(p []byte) (int, error) {
	if _, err := w.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
