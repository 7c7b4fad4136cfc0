// Package clip shortens long text for people and models: it keeps the start
// and the end, where the useful part of a log or a listing usually is, and
// says how much it left out.
package clip

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Middle returns s when it has at most limit characters; otherwise its head
// and tail with a marker "[… N characters omitted …]" between them, the
// whole at most about limit characters. It cuts at line ends when one is
// near, so that no line is half shown, and never inside a character.
// A limit of 0 or less means no limit.
func Middle(s string, limit int) string { return MiddleOf(s, 0, limit) }

// MiddleOf is Middle for a text that was already cut: s is its head and
// its tail joined, and hidden more characters were between them (a text
// too long to keep whole). The result is Middle's for the whole text, the
// marker counting the hidden characters too, as long as the cut is in the
// part Middle leaves out: s's head and tail each hold limit characters or
// more. A text within limit is s.
func MiddleOf(s string, hidden, limit int) string {
	head, tail, omitted, ok := cut(s, hidden, limit)
	if !ok {
		return s
	}
	return strings.TrimSuffix(head, "\n") + fmt.Sprintf("\n[… %d characters omitted …]\n", omitted) + tail
}

// Kept says what Middle(s, limit) keeps of s: its first head bytes and its
// last tail bytes. A text within limit is kept whole: head is len(s) and
// tail 0.
func Kept(s string, limit int) (head, tail int) {
	h, t, _, ok := cut(s, 0, limit)
	if !ok {
		return len(s), 0
	}
	return len(h), len(t)
}

// cut is the head and the tail of s that Middle keeps and how many
// characters it leaves out; ok is false when s is kept whole.
func cut(s string, hidden, limit int) (head, tail string, omitted int, ok bool) {
	total := utf8.RuneCountInString(s) + max(hidden, 0)
	if limit <= 0 || total <= limit {
		return s, "", 0, false
	}
	runes := []rune(s)
	marker := fmt.Sprintf("\n[… %d characters omitted …]\n", total)
	keep := max(limit-len(marker), 2)
	headN := min(keep*3/5, len(runes))
	tailN := min(keep-keep*3/5, len(runes)-headN)
	head, tail = string(runes[:headN]), string(runes[len(runes)-tailN:])
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)*4/5 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i <= len(tail)/5 {
		tail = tail[i+1:]
	}
	omitted = total - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	return head, tail, omitted, true
}

// OneLine joins s's lines (and runs of spaces) into one line and caps it at
// n characters, marking a cut with "…".
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
