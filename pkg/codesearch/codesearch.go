// Package codesearch is full-text search over a tree's files: literal or RE2
// patterns, matched line by line, in parallel over the files, each file read
// once for a list of patterns tried in order (an exact pattern, then looser
// ones) so that a fallback costs no second pass over the tree.
//
// Every pattern is narrowed first by a substring each of its matches must
// hold, checked over a whole file at once, so that most files are rejected
// without splitting them into lines.
package codesearch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
)

// Limits of what is searched.
const (
	// MaxFileSize: larger files are not searched.
	MaxFileSize = 1 << 20
	// binaryProbe: a NUL byte in a file's first bytes marks it binary.
	binaryProbe = 8000
)

// Pattern is one compiled query.
type Pattern struct {
	// need is a substring every match holds (lower-cased when fold);
	// empty when none is known.
	need []byte
	fold bool
	// line reports whether one line matches.
	line func([]byte) bool
}

// Match reports whether one line matches.
func (p Pattern) Match(line []byte) bool { return p.line(line) }

// Literal matches lines holding s, ignoring case when fold.
func Literal(s string, fold bool) Pattern {
	q := []byte(s)
	if !fold || !hasLetter(s) {
		return Pattern{need: q, line: func(l []byte) bool { return bytes.Contains(l, q) }}
	}
	if !isASCII(s) {
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(s))
		return Pattern{line: re.Match}
	}
	lq := bytes.ToLower(q)
	return Pattern{need: lq, fold: true, line: func(l []byte) bool { return containsFold(l, lq) }}
}

// Regexp matches lines matching the RE2 expression expr, ignoring case
// when fold.
func Regexp(expr string, fold bool) (Pattern, error) {
	if fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Pattern{}, err
	}
	p := Pattern{line: re.Match}
	// The filter folds ASCII only: a line whose one match needs a wider
	// fold of an ASCII letter (the Kelvin sign for k, the long s) is missed.
	if lit, folded := required(expr); lit != "" && (!folded || isASCII(lit)) {
		p.need, p.fold = []byte(lit), folded
	}
	return p, nil
}

// required finds the longest literal every match of expr holds, looking at
// the top-level sequence of the expression; folded tells whether it is to be
// matched ignoring case.
func required(expr string) (lit string, folded bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture && len(re.Sub) == 1 {
		re = re.Sub[0]
	}
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	for _, p := range parts {
		for p.Op == syntax.OpCapture && len(p.Sub) == 1 {
			p = p.Sub[0]
		}
		if p.Op != syntax.OpLiteral {
			continue
		}
		s := string(p.Rune)
		if len(s) > len(lit) {
			lit, folded = s, p.Flags&syntax.FoldCase != 0
			if folded {
				lit = strings.ToLower(lit)
			}
		}
	}
	return lit, folded
}

// Hits are the matching lines of one file.
type Hits struct {
	File  string
	Lines []int    // 1-based
	Texts []string // the lines, without their end
}

// Search reads each of files (relative to dir, with forward slashes) once
// and returns, for the first of patterns that matches anywhere, the files
// it matches in the order given, and that pattern's index (-1: none
// matched). Files that vanished, are not regular, larger than MaxFileSize or
// binary are skipped. clip shortens a matching line's text for the result.
func Search(ctx context.Context, dir string, files []string, patterns []Pattern, clip func(string) string) ([]Hits, int, error) {
	if len(patterns) == 0 || len(files) == 0 {
		return nil, -1, ctx.Err()
	}
	if clip == nil {
		clip = func(s string) string { return s }
	}
	type result struct {
		tier int
		hits Hits
	}
	results := make([]result, len(files))
	// best is the lowest tier that matched so far: files need not try
	// looser ones than it any more.
	var (
		mu   sync.Mutex
		best = len(patterns)
		next int
	)
	take := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(files) {
			return -1, best
		}
		next++
		return next - 1, best
	}
	workers := min(runtime.GOMAXPROCS(0), len(files))
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			var buf, lower []byte
			for {
				i, limit := take()
				if i < 0 || ctx.Err() != nil {
					return
				}
				var data []byte
				data, buf = readFile(filepath.Join(dir, filepath.FromSlash(files[i])), buf)
				if data == nil {
					continue
				}
				lower = lower[:0]
				for t := 0; t <= min(limit, len(patterns)-1); t++ {
					p := patterns[t]
					if len(p.need) > 0 {
						hay := data
						if p.fold {
							if len(lower) == 0 {
								lower = appendLower(lower, data)
							}
							hay = lower
						}
						if !bytes.Contains(hay, p.need) {
							continue
						}
					}
					h := matchLines(data, p.line, clip)
					if len(h.Lines) == 0 {
						continue
					}
					h.File = files[i]
					results[i] = result{tier: t, hits: h}
					mu.Lock()
					best = min(best, t)
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, -1, fmt.Errorf("search %s: %w", dir, err)
	}
	if best == len(patterns) {
		return nil, -1, nil
	}
	var out []Hits
	for _, r := range results {
		if len(r.hits.Lines) > 0 && r.tier == best {
			out = append(out, r.hits)
		}
	}
	return out, best, nil
}

// readFile reads a regular, text file no larger than MaxFileSize into buf;
// nil when it is none of those.
func readFile(path string, buf []byte) (data, grown []byte) {
	f, err := os.Open(path)
	if err != nil {
		return nil, buf
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > MaxFileSize {
		return nil, buf
	}
	n := int(info.Size())
	if cap(buf) < n+1 {
		buf = make([]byte, n+1, max(n+1, 64<<10))
	}
	got, err := io.ReadFull(f, buf[:n])
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, buf
	}
	data = buf[:got]
	if bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0 {
		return nil, buf
	}
	return data, buf
}

func matchLines(data []byte, match func([]byte) bool, clip func(string) string) Hits {
	var h Hits
	n := 0
	for len(data) > 0 {
		n++
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if match(l) {
			h.Lines = append(h.Lines, n)
			h.Texts = append(h.Texts, clip(string(l)))
		}
	}
	return h
}

func appendLower(dst, src []byte) []byte {
	for _, c := range src {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// containsFold reports whether l holds lq (ASCII, lower case) ignoring
// ASCII case.
func containsFold(l, lq []byte) bool {
	if len(lq) == 0 {
		return true
	}
	first := lq[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper -= 'a' - 'A'
	}
	for i := 0; i+len(lq) <= len(l); i++ {
		c := l[i]
		if c != first && c != upper {
			continue
		}
		if equalFoldASCII(l[i:i+len(lq)], lq) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a, lower []byte) bool {
	for i, c := range a {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func hasLetter(s string) bool {
	return strings.ToLower(s) != strings.ToUpper(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
