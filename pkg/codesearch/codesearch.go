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
	// lit, when set, is the whole of a literal pattern (lower-cased when
	// fold), holding no line end: its lines are found by looking for it
	// over a file's whole text.
	lit []byte
	// wideFold: a folded need holds k or s, which the Kelvin sign and the
	// long s match too; a line with more than ASCII is then tried
	// whatever its ASCII text.
	wideFold bool
	// line reports whether one line matches.
	line func([]byte) bool
}

// Match reports whether one line matches.
func (p Pattern) Match(line []byte) bool { return p.line(line) }

// Literal matches lines holding s, ignoring case when fold.
func Literal(s string, fold bool) Pattern {
	q := []byte(s)
	if !fold || !hasLetter(s) {
		return Pattern{needs: [][]byte{q}, lit: wholeLit(q), line: func(l []byte) bool { return bytes.Contains(l, q) }}
	}
	if !isASCII(s) {
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(s))
		return Pattern{line: re.Match}
	}
	lq := bytes.ToLower(q)
	return Pattern{needs: [][]byte{lq}, fold: true, lit: wholeLit(lq), line: func(l []byte) bool { return containsFold(l, lq) }}
}

// wholeLit is q when it can be looked for over a whole text: not empty,
// without a line end (nor a carriage return, which a line's end drops).
func wholeLit(q []byte) []byte {
	if len(q) == 0 || bytes.ContainsAny(q, "\r\n") {
		return nil
	}
	return q
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
	for _, n := range p.needs {
		p.wideFold = p.wideFold || (folded && bytes.ContainsAny(n, "ks"))
	}
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
	Texts []string // the first Options.Texts lines, without their end
}

// Options shape a search's result.
type Options struct {
	// Clip shortens a matching line's text; nil keeps it whole.
	Clip func(string) string
	// Texts is how many matching lines of a file have their text kept
	// (the others only their numbers); 0 keeps them all.
	Texts int
}

// Search reads each of files (relative to dir, with forward slashes) once
// and returns, for the first of patterns that matches anywhere, the files
// it matches in the order given, and that pattern's index (-1: none
// matched). Files that vanished, are not regular, larger than MaxFileSize or
// binary are skipped.
func Search(ctx context.Context, dir string, files []string, patterns []Pattern, opt Options) ([]Hits, int, error) {
	return search(ctx, dir, files, patterns, opt, nil)
}

// search is Search, through the index ix when it is not nil.
func search(ctx context.Context, dir string, files []string, patterns []Pattern, opt Options, ix *Index) ([]Hits, int, error) {
	if len(patterns) == 0 || len(files) == 0 {
		return nil, -1, ctx.Err()
	}
	if opt.Clip == nil {
		opt.Clip = func(s string) string { return s }
	}
	// Files are opened beneath dir: a link planted in the checkout never
	// takes the search outside it.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, -1, fmt.Errorf("search %s: %w", dir, err)
	}
	defer root.Close()
	s := &searchRun{root: root, files: files, patterns: patterns, opt: opt, ix: ix,
		results: make([]searchResult, len(files)), best: len(patterns)}
	if ix != nil {
		s.entries, s.verify = ix.snapshot(files)
		s.made = make([]*entry, len(files))
		s.grams = make([][]uint32, len(patterns))
		for t, p := range patterns {
			s.grams[t] = trigrams(p.needs)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(files))
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			s.work(ctx)
		}()
	}
	wg.Wait()
	if ix != nil {
		// A search cut short has not checked every file: the next one
		// checks them again.
		ix.store(files, s.made, s.verify && ctx.Err() != nil)
	}
	if err := ctx.Err(); err != nil {
		return nil, -1, fmt.Errorf("search %s: %w", dir, err)
	}
	if s.best == len(patterns) {
		return nil, -1, nil
	}
	var out []Hits
	for _, r := range s.results {
		if len(r.hits.Lines) > 0 && r.tier == s.best {
			out = append(out, r.hits)
		}
	}
	return out, s.best, nil
}

// searchRun is one search's state, shared by its workers.
type searchRun struct {
	root     *os.Root
	files    []string
	patterns []Pattern
	opt      Options
	// ix, when given: entries are its filters of files as they were,
	// made those of this search, grams each pattern's trigrams; verify
	// says whether an entry must be checked against its file first.
	ix            *Index
	entries, made []*entry
	verify        bool
	grams         [][]uint32
	results       []searchResult // by file
	mu            sync.Mutex
	// best is the lowest tier that matched so far: files need not try
	// looser ones than it any more; next is the next file to search.
	best, next int
}

// searchResult is a file's hits for the tightest pattern (tier) it
// matched.
type searchResult struct {
	tier int
	hits Hits
}

// scratch is a worker's buffers, reused from file to file.
type scratch struct {
	buf, lower []byte
	gs         gramSet
}

// take is the next file to search and the loosest tier worth trying.
func (s *searchRun) take() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.files) {
		return -1, s.best
	}
	s.next++
	return s.next - 1, s.best
}

// work searches files until none is left or ctx ends.
func (s *searchRun) work(ctx context.Context) {
	var sc scratch
	for {
		i, limit := s.take()
		if i < 0 || ctx.Err() != nil {
			return
		}
		limit = min(limit, len(s.patterns)-1)
		e, skip := s.filter(i, limit)
		if skip {
			continue
		}
		data, st, grown := readFile(s.root, s.files[i], sc.buf)
		sc.buf = grown
		sc.lower = sc.lower[:0]
		if s.ix != nil && e == nil {
			// Indexed as it is read: the filter is made from the lowered
			// text the patterns need anyway.
			e = &entry{skip: true}
			if data != nil {
				sc.lower = appendLower(sc.lower, data)
				e = sc.gs.newEntry(sc.lower, st.Size(), st.ModTime())
			} else if st != nil {
				e.size, e.mtime = st.Size(), st.ModTime()
			}
			s.made[i] = e
		}
		if data != nil {
			s.match(i, limit, data, &sc, e)
		}
	}
}

// filter is the index's entry of file i, when it is current, and whether
// the file can be skipped unread: no pattern up to limit has all its
// trigrams in it.
func (s *searchRun) filter(i, limit int) (*entry, bool) {
	if s.ix == nil {
		return nil, false
	}
	e := s.entries[i]
	if e != nil && s.verify && !e.current(s.root, s.files[i]) {
		e = nil
	}
	if e == nil {
		return nil, false
	}
	t := 0
	for t <= limit && !e.may(s.grams[t]) {
		t++
	}
	return e, t > limit
}

// match records the file i's hits for the tightest pattern up to limit
// that matches its text data.
func (s *searchRun) match(i, limit int, data []byte, sc *scratch, e *entry) {
	for t := 0; t <= limit; t++ {
		p := s.patterns[t]
		if e != nil && !e.may(s.grams[t]) {
			continue
		}
		if len(p.needs) > 0 || p.fold {
			if p.fold && len(sc.lower) == 0 {
				sc.lower = appendLower(sc.lower, data)
			}
			hay := data
			if p.fold {
				hay = sc.lower
			}
			if !containsAll(hay, p.needs) {
				continue
			}
		}
		h := p.matchLines(data, sc.lower, s.opt)
		if len(h.Lines) == 0 {
			continue
		}
		h.File = s.files[i]
		s.results[i] = searchResult{tier: t, hits: h}
		s.mu.Lock()
		s.best = min(s.best, t)
		s.mu.Unlock()
		return
	}
}

// readFile reads a regular, text file no larger than MaxFileSize, opened
// beneath root, into buf; nil data when it is none of those. st is the open
// file's, when it was opened.
func readFile(root *os.Root, name string, buf []byte) (data []byte, st os.FileInfo, grown []byte) {
	// Without a path stat: a file is read into a buffer one byte larger
	// than the largest searched, and skipped when it fills it. The open
	// file's own stat refuses what is not a regular file (a FIFO, opened
	// without blocking, a device).
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, buf
	}
	defer f.Close()
	st, err = f.Stat()
	if err != nil {
		return nil, nil, buf
	}
	if !st.Mode().IsRegular() || st.Size() > MaxFileSize {
		return nil, st, buf
	}
	if cap(buf) < MaxFileSize+1 {
		buf = make([]byte, MaxFileSize+1)
	}
	buf = buf[:MaxFileSize+1]
	got, err := io.ReadFull(f, buf)
	if (err != nil && err != io.ErrUnexpectedEOF && err != io.EOF) || got > MaxFileSize {
		return nil, st, buf
	}
	data = buf[:got]
	if bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0 {
		return nil, st, buf
	}
	return data, st, buf
}

// matchLines finds the lines of data the pattern matches; lower is data
// with its ASCII letters in lower case, or empty when not made yet.
func (p Pattern) matchLines(data, lower []byte, opt Options) Hits {
	if p.fold && len(lower) != len(data) {
		lower = appendLower(nil, data)
	}
	if len(p.lit) > 0 {
		hay := data
		if p.fold {
			hay = lower
		}
		return findLines(data, hay, p.lit, opt)
	}
	var h Hits
	n := 0
	for off := 0; off < len(data); {
		n++
		end := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			end = off + i
		}
		l := bytes.TrimSuffix(data[off:end], []byte{'\r'})
		// A line without the substrings every match holds is not
		// tried (on the lowered text when they are lowered), unless a
		// match may need a wider fold than ASCII's and the line has
		// more than ASCII.
		hay := l
		if p.fold {
			hay = lower[off : off+len(l)]
		}
		if (containsAll(hay, p.needs) || (p.wideFold && bytes.ContainsFunc(l, func(r rune) bool { return r >= utf8.RuneSelf }))) && p.line(l) {
			h.add(n, l, opt)
		}
		off = end + 1
	}
	return h
}

// findLines finds the lines of data holding lit, looked for in hay (data,
// or data lowered, with the same offsets) over the whole text at once:
// lit holds no line end, so each place it is found is inside one line.
func findLines(data, hay, lit []byte, opt Options) Hits {
	var h Hits
	n, start := 1, 0 // the line of start, which begins a line
	for start < len(hay) {
		i := bytes.Index(hay[start:], lit)
		if i < 0 {
			break
		}
		at := start + i
		if k := bytes.Count(hay[start:at], []byte{'\n'}); k > 0 {
			n += k
			start += bytes.LastIndexByte(hay[start:at], '\n') + 1
		}
		end := len(data)
		if j := bytes.IndexByte(data[at:], '\n'); j >= 0 {
			end = at + j
		}
		h.add(n, bytes.TrimSuffix(data[start:end], []byte{'\r'}), opt)
		n, start = n+1, end+1
	}
	return h
}

// add records the matching line n, with its text while opt keeps texts.
func (h *Hits) add(n int, l []byte, opt Options) {
	h.Lines = append(h.Lines, n)
	if opt.Texts <= 0 || len(h.Texts) < opt.Texts {
		h.Texts = append(h.Texts, opt.Clip(string(l)))
	}
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
