package report

import (
	"fmt"
	"strings"
)

// Per-test output kept while a test runs: its head and its tail, where the
// failing assertion and a panic's stack are.
const (
	keepHead = 4 << 10
	keepTail = 24 << 10
)

// Text keeps the head and the tail of the lines written to it: at most
// Head bytes of the first lines, and Tail bytes of the last ones. The zero
// value keeps a test's worth of output.
type Text struct {
	Head, Tail int

	head    strings.Builder
	tail    []string
	tailLen int
	omitted int
}

// Write adds text; it never fails.
func (b *Text) Write(p []byte) (int, error) {
	b.add(string(p))
	return len(p), nil
}

// WriteString adds text; it never fails.
func (b *Text) WriteString(s string) (int, error) {
	b.add(s)
	return len(s), nil
}

func (b *Text) add(s string) {
	if b.Head == 0 && b.Tail == 0 {
		b.Head, b.Tail = keepHead, keepTail
	}
	if b.head.Len()+len(s) <= b.Head && len(b.tail) == 0 {
		b.head.WriteString(s)
		return
	}
	b.tail = append(b.tail, s)
	b.tailLen += len(s)
	for b.tailLen > b.Tail && len(b.tail) > 1 {
		b.tailLen -= len(b.tail[0])
		b.omitted += len(b.tail[0])
		b.tail = b.tail[1:]
	}
}

// String is the text kept, with a line saying how much was left out.
func (b *Text) String() string {
	var s strings.Builder
	s.WriteString(b.head.String())
	if b.omitted > 0 {
		fmt.Fprintf(&s, "[… %d bytes of output omitted …]\n", b.omitted)
	}
	for _, l := range b.tail {
		s.WriteString(l)
	}
	return s.String()
}
