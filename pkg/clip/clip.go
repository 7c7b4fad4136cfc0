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
func Middle(s string, limit int) string {
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	runes := []rune(s)
	marker := func(n int) string { return fmt.Sprintf("\n[… %d characters omitted …]\n", n) }
	keep := max(limit-len(marker(len(runes))), 2)
	headN := keep * 3 / 5
	tailN := keep - headN
	head, tail := string(runes[:headN]), string(runes[len(runes)-tailN:])
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)*4/5 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i <= len(tail)/5 {
		tail = tail[i+1:]
	}
	omitted := len(runes) - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
	return strings.TrimSuffix(head, "\n") + marker(omitted) + tail
}
