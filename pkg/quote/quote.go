// Package quote is what is quoted from a checkout for a reader who cannot
// open it (the judge's model): named pieces of source, cut at line
// boundaries and marked where they stop, so that a quote cannot be read as
// running on into what follows it; and the data files a test names. The
// checkout is read as untrusted: beneath it, through no link, sized first.
// What a language quotes of a test is its driver's (the judge asks for it
// as a capability); the cutting is the same for every language.
package quote

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/untrusted"
)

// Source is a piece of the repository the reader is shown: a failing
// test's function, or a file it compares with.
type Source struct {
	Name string `json:"name"` // what it is: "TestParse (parse_test.go:12)", "testdata/want.golden"
	Text string `json:"text"`
}

// Caps on what is quoted of a checkout, in bytes.
const (
	// MaxTest bounds a test's quote (its source with what runs around it).
	MaxTest = 6000
	// MaxDataFile bounds a data file's quote, MaxDataFiles how many a
	// test's quote brings.
	MaxDataFile  = 2000
	MaxDataFiles = 3
	// MaxSourceFile bounds a source file read at all (what is shown of it
	// is capped above).
	MaxSourceFile = 4 << 20
	maxDataRead   = 1 << 20
)

// Text keeps the start of s, up to max bytes (never inside a character),
// and says how much it cut.
func Text(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n[… %d more bytes not shown …]", s[:cut], len(s)-cut)
}

// Lines keeps the whole lines of s, the source of name, that fit in max
// bytes, and ends with a line saying how many were left out.
func Lines(s string, max int, name string) string {
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], '\n')
	if cut <= 0 {
		return Text(s, max) // its first line alone is longer
	}
	rest := s[cut+1:]
	n := strings.Count(rest, "\n")
	if !strings.HasSuffix(rest, "\n") {
		n++
	}
	return fmt.Sprintf("%s[… %d more lines of %s not shown; its quoted source ends here …]\n", s[:cut+1], n, name)
}

// Range is src[start:end], from the beginning of its first line when only
// blanks come before it there, whole if it fits in max bytes, else cut at
// the end of a line with a marker saying how many lines are left out.
func Range(src string, start, end uint, max int) string {
	s := int(start)
	for s > 0 && (src[s-1] == ' ' || src[s-1] == '\t') {
		s--
	}
	if s > 0 && src[s-1] != '\n' {
		s = int(start) // something else shares the line: the range alone
	}
	text := src[s:int(end)]
	if len(text) <= max {
		return text
	}
	cut := strings.LastIndexByte(text[:max], '\n')
	if cut <= 0 {
		// One line longer than the room: no line boundary to cut at.
		return fmt.Sprintf("[… a line of %d bytes not shown …]", len(text))
	}
	rest := strings.Count(text[cut+1:], "\n") + 1
	return fmt.Sprintf("%s\n[… %d more lines not shown …]", text[:cut], rest)
}

// stringsRE are the quoted strings of a source, "…" or '…', for the data
// files a test names.
var stringsRE = regexp.MustCompile(`"([^"\\\n]{1,200})"|'([^'\\\n]{1,200})'`)

// Strings are the strings quoted in text, "…" or '…'.
func Strings(text string) []string {
	var out []string
	for _, m := range stringsRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

// DataFiles are the files under the directory rel of the checkout at root
// that strs name (x.golden, or x.golden under testdata), at most
// MaxDataFiles, each read beneath the checkout, through no link, sized
// first: a test data file linked to a host file is never quoted.
func DataFiles(root, rel string, strs []string) []Source {
	dir := filepath.Join(root, filepath.FromSlash(rel))
	seen := map[string]bool{}
	var out []Source
	for _, l := range strs {
		if len(out) == MaxDataFiles {
			break
		}
		if l == "" || strings.ContainsAny(l, "\n\x00") || len(l) > 200 {
			continue
		}
		for _, cand := range []string{filepath.Join(dir, l), filepath.Join(dir, "testdata", l)} {
			if !strings.HasPrefix(cand, dir+string(filepath.Separator)) || seen[cand] {
				continue
			}
			data, err := untrusted.ReadText(root, untrusted.Rel(root, cand), maxDataRead)
			if err != nil {
				continue
			}
			seen[cand] = true
			out = append(out, Source{Name: Rel(root, cand), Text: Text(string(data), MaxDataFile)})
			break
		}
	}
	return out
}

// Rel is p relative to root, slash-separated; p's base name when it is not
// under root.
func Rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return filepath.Base(p)
}
