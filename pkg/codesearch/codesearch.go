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
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"regexp"
	"regexp/syntax"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
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
	// needs are substrings every match holds (lower-cased when fold);
	// none when none is known.
	needs [][]byte
	fold  bool
	// line reports whether one line matches.
	line func([]byte) bool
}

// Match reports whether one line matches.
func (p Pattern) Match(line []byte) bool { return p.line(line) }

// Literal matches lines holding s, ignoring case when fold.
func Literal(s string, fold bool) Pattern {
	q := []byte(s)
	if !fold || !hasLetter(s) {
		return Pattern{needs: [][]byte{q}, line: func(l []byte) bool { return bytes.Contains(l, q) }}
	}
	if !isASCII(s) {
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(s))
		return Pattern{line: re.Match}
	}
	lq := bytes.ToLower(q)
	return Pattern{needs: [][]byte{lq}, fold: true, line: func(l []byte) bool { return containsFold(l, lq) }}
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
	lits, folded := required(expr)
	for _, lit := range lits {
		if !folded || isASCII(lit) {
			p.needs = append(p.needs, []byte(lit))
		}
	}
	p.fold = folded
	return p, nil
}

// required finds literals every match of expr holds, the longest first,
// looking at the top-level sequence of the expression; folded tells whether
// they are to be matched ignoring case (then they are in lower case). When
// the literals differ in folding, only those like the longest are kept.
func required(expr string) (lits []string, folded bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture && len(re.Sub) == 1 {
		re = re.Sub[0]
	}
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	type lit struct {
		s    string
		fold bool
	}
	var found []lit
	for _, p := range parts {
		for p.Op == syntax.OpCapture && len(p.Sub) == 1 {
			p = p.Sub[0]
		}
		if p.Op != syntax.OpLiteral {
			continue
		}
		l := lit{string(p.Rune), p.Flags&syntax.FoldCase != 0}
		if l.fold {
			l.s = strings.ToLower(l.s)
		}
		found = append(found, l)
	}
	if len(found) == 0 {
		return nil, false
	}
	sort.SliceStable(found, func(i, j int) bool { return len(found[i].s) > len(found[j].s) })
	folded = found[0].fold
	for _, l := range found {
		if l.fold == folded {
			lits = append(lits, l.s)
		}
	}
	return lits, folded
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
	// Files are opened beneath dir: a link planted in the checkout never
	// takes the search outside it.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, -1, fmt.Errorf("search %s: %w", dir, err)
	}
	defer root.Close()
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
				data, buf = readFile(root, files[i], buf)
				if data == nil {
					continue
				}
				lower = lower[:0]
				for t := 0; t <= min(limit, len(patterns)-1); t++ {
					p := patterns[t]
					if len(p.needs) > 0 {
						hay := data
						if p.fold {
							if len(lower) == 0 {
								lower = appendLower(lower, data)
							}
							hay = lower
						}
						if !containsAll(hay, p.needs) {
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

// readFile reads a regular, text file no larger than MaxFileSize, opened
// beneath root, into buf; nil when it is none of those.
func readFile(root *os.Root, name string, buf []byte) (data, grown []byte) {
	// Without a path stat: a file is read into a buffer one byte larger
	// than the largest searched, and skipped when it fills it. The open
	// file's own stat refuses what is not a regular file (a FIFO, opened
	// without blocking, a device).
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, buf
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > MaxFileSize {
		return nil, buf
	}
	if cap(buf) < MaxFileSize+1 {
		buf = make([]byte, MaxFileSize+1)
	}
	buf = buf[:MaxFileSize+1]
	got, err := io.ReadFull(f, buf)
	if (err != nil && err != io.ErrUnexpectedEOF && err != io.EOF) || got > MaxFileSize {
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

func containsAll(hay []byte, needs [][]byte) bool {
	for _, n := range needs {
		if !bytes.Contains(hay, n) {
			return false
		}
	}
	return true
}

// appendLower appends src with its ASCII letters in lower case, eight
// bytes at a time.
func appendLower(dst, src []byte) []byte {
	n := len(dst)
	dst = append(dst, src...)
	out := dst[n:]
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= len(out); i += 8 {
		w := binary.LittleEndian.Uint64(out[i:])
		// Per byte: its high bit clear (ASCII), at least 'A' and at
		// most 'Z' (adding 0x80-'A' sets the high bit from 'A' up,
		// adding 0x7f-'Z' from past 'Z' up).
		low7 := w & (0x7f * ones)
		geA := low7 + (0x80-'A')*ones
		gtZ := low7 + (0x7f-'Z')*ones
		upper := (geA &^ gtZ) &^ w & (0x80 * ones)
		binary.LittleEndian.PutUint64(out[i:], w|upper>>2)
	}
	for ; i < len(out); i++ {
		if c := out[i]; 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
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
