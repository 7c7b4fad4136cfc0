// Package canon writes code's tokens in one form where two spellings mean
// the same, so that whoever compares code (the revert gate, the offline
// policy's own revert check) sees through a rewording: a comparison with an
// integer constant, strict or not (`total > 99999` is `total >= 100000`),
// and the constant's own spelling (`100_000`, `0x186a0`).
//
// Tokens are as the callers cut a line: identifiers and numbers whole,
// strings whole, every other character a token of its own (`>=` is `>`
// then `=`); spacing and comments are left out before.
package canon

import (
	"strconv"
	"strings"
)

// Line cuts a line of code into its tokens (spacing dropped; a comment is
// kept as its characters) and returns Comparisons of them, joined by
// spaces: two lines with the same canonical form say the same.
func Line(s string) string {
	return strings.Join(Comparisons(Tokens(s)), " ")
}

// Tokens cuts a line into tokens: identifiers and numbers whole, quoted
// strings whole, every other character on its own; spacing is dropped.
func Tokens(s string) []string { return TokensWithout(s, nil) }

// TokensWithout is Tokens leaving out comments: where a token could start,
// comment says how many bytes of rest are a comment (0: none there).
func TokensWithout(s string, comment func(rest string) int) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			i++
			continue
		}
		if comment != nil {
			if n := comment(s[i:]); n > 0 {
				i += n
				continue
			}
		}
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			out = append(out, s[i:j])
			i = j
		case word(c):
			j := i
			for j < len(s) && word(s[j]) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			out = append(out, s[i:i+1])
			i++
		}
	}
	return out
}

func word(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// Comparisons returns toks with every comparison of an operand with an
// integer constant written non-strict, the constant in decimal: `x > 9`
// is `x >= 10`, `x < 10` is `x <= 9`, `9 < x` is `10 <= x`, `10 > x` is
// `9 >= x`; `x >= 0x10` is `x >= 16`. Over integers each rewriting means
// the same; over other numbers it is close enough for telling a revert in
// disguise. A constant is rewritten only where it is a whole operand (what
// stands beside it binds no tighter: `x > 9 * y` is left alone), and a
// `<` before a minus sign is left alone (Go's `ch <- 1` is no comparison).
func Comparisons(toks []string) []string {
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); {
		if rewritten, n := rightConstant(toks, i); n > 0 {
			out = append(out, rewritten...)
			i += n
			continue
		}
		if rewritten, n := leftConstant(toks, i); n > 0 {
			out = append(out, rewritten...)
			i += n
			continue
		}
		out = append(out, toks[i])
		i++
	}
	return out
}

// operator reads a comparison operator at toks[i]: its direction ('<' or
// '>'), whether it is strict, and how many tokens it takes; n is 0 for
// none (a shift, an arrow, an assignment).
func operator(toks []string, i int) (dir byte, strict bool, n int) {
	if i >= len(toks) || toks[i] != "<" && toks[i] != ">" {
		return 0, false, 0
	}
	if i > 0 {
		switch toks[i-1] {
		case "<", ">", "-", "=":
			return 0, false, 0 // <<, >>, ->, =>, a part of an operator before
		}
	}
	next := ""
	if i+1 < len(toks) {
		next = toks[i+1]
	}
	switch next {
	case "<", ">":
		return 0, false, 0
	case "=":
		if i+2 < len(toks) && (toks[i+2] == "=" || toks[i+2] == ">") {
			return 0, false, 0 // <==, <=>
		}
		return toks[i][0], false, 2
	}
	return toks[i][0], true, 1
}

// constant reads an integer constant at toks[i], a minus sign before it
// allowed when minus is true: its value and how many tokens it takes.
func constant(toks []string, i int, minus bool) (v int64, n int) {
	sign := int64(1)
	if minus && i < len(toks) && toks[i] == "-" {
		sign, i, n = -1, i+1, 1
	}
	if i >= len(toks) || toks[i] == "" || toks[i][0] < '0' || toks[i][0] > '9' {
		return 0, 0
	}
	x, err := strconv.ParseInt(toks[i], 0, 64)
	if err != nil || x == 1<<63-1 {
		return 0, 0
	}
	return sign * x, n + 1
}

// rightConstant rewrites `OP N` at i, the constant a whole operand.
func rightConstant(toks []string, i int) ([]string, int) {
	dir, strict, n := operator(toks, i)
	if n == 0 {
		return nil, 0
	}
	// After a strict `<` a minus sign is a channel's arrow as likely.
	v, m := constant(toks, i+n, !(strict && dir == '<'))
	if m == 0 || !closes(toks, i+n+m) {
		return nil, 0
	}
	if strict {
		if dir == '>' {
			v++
		} else {
			v--
		}
	}
	return append([]string{string(dir), "="}, number(v)...), n + m
}

// leftConstant rewrites `N OP` at i, the constant a whole operand.
func leftConstant(toks []string, i int) ([]string, int) {
	if !opens(toks, i) {
		return nil, 0
	}
	v, m := constant(toks, i, true)
	if m == 0 {
		return nil, 0
	}
	dir, strict, n := operator(toks, i+m)
	if n == 0 {
		return nil, 0
	}
	if strict {
		if dir == '<' {
			v++
		} else {
			v--
		}
	}
	return append(number(v), string(dir), "="), m + n
}

// number is v's tokens: its digits, after a minus sign when negative.
func number(v int64) []string {
	if v < 0 {
		return []string{"-", strconv.FormatInt(-v, 10)}
	}
	return []string{strconv.FormatInt(v, 10)}
}

// closers may follow a whole right operand; openers may precede a whole
// left one.
var (
	closers = map[string]bool{")": true, "]": true, "}": true, "{": true, ",": true, ";": true, ":": true, "?": true, "&": true, "|": true,
		"and": true, "or": true, "then": true, "else": true, "if": true, "=": true, "!": true}
	openers = map[string]bool{"(": true, "[": true, "{": true, ",": true, ";": true, ":": true, "?": true, "&": true, "|": true, "!": true, "=": true,
		"and": true, "or": true, "not": true, "if": true, "elif": true, "while": true, "return": true, "assert": true}
)

func closes(toks []string, i int) bool { return i >= len(toks) || closers[toks[i]] }

func opens(toks []string, i int) bool { return i == 0 || openers[toks[i-1]] }
