package harness

import (
	"regexp"
	"strings"
	"unicode"
)

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
