package tools

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/redfix/redfix/pkg/codesearch"
)

// What a text search reads and shows of a line.
const (
	maxSearchFile = codesearch.MaxFileSize // larger files are not searched
	lineCap       = 240                    // characters of one matching line shown
)

type fileHits struct {
	file  string
	lines []int
	texts []string
}

// grepFile returns the matching lines of one file of the workspace;
// binary and very large files, and links, have none.
func (s *Session) grepFile(rel string, match func(string) bool) ([]int, []string) {
	data, err := s.ws.ReadText(rel, maxSearchFile)
	if err != nil {
		return nil, nil
	}
	var ns []int
	var ts []string
	for i, l := range strings.Split(string(data), "\n") {
		if match(l) {
			ns = append(ns, i+1)
			ts = append(ts, clipLine(strings.TrimRight(l, "\r"), lineCap))
		}
	}
	return ns, ts
}

func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " […]"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// pattern compiles a query for codesearch.
func pattern(query string, regex, fold bool) (codesearch.Pattern, error) {
	if regex {
		return codesearch.Regexp(query, fold)
	}
	return codesearch.Literal(query, fold), nil
}

// matcher builds the line test of a search in one file: literal or RE2,
// and the same ignoring case for the fallback when the exact search finds
// nothing.
func matcher(query string, regex, fold bool) (func(string) bool, error) {
	p, err := pattern(query, regex, fold)
	if err != nil {
		return nil, err
	}
	return func(l string) bool { return p.Match([]byte(l)) }, nil
}

// identWords splits a query into the words of its identifiers: at case
// changes ("queryAll" → query, all; "HTTPServer" → http, server), digits
// and punctuation ("query.all", "query_all"), all lower-cased.
func identWords(q string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(q)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r):
			if unicode.IsUpper(r) && len(cur) > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			cur = append(cur, r)
		case unicode.IsDigit(r):
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return words
}

// nearQuery is the fallback search for a literal query that matched
// nothing, even ignoring case: its words in order, ignoring case, with any
// punctuation or none between them ("queryAll" finds "query.all",
// "query_all" and "QueryAll"). ok is false when the query has fewer than
// two words, for which ignoring case was the whole fallback.
func nearQuery(q string) (re string, words []string, ok bool) {
	words = identWords(q)
	if len(words) < 2 {
		return "", words, false
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = regexp.QuoteMeta(w)
	}
	return `(?i)` + strings.Join(parts, `[\W_]*`), words, true
}
