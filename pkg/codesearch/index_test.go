package codesearch

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// lineScan is the search as it was before whole-text matching and the
// index: every file read, filtered by the substrings a pattern needs,
// split into lines, each line tried with the pattern's own test, tier by
// tier. The other searches must answer as it
// does.
func lineScan(t *testing.T, dir string, files []string, patterns []Pattern) ([]string, int) {
	t.Helper()
	for tier, p := range patterns {
		var out []string
		for _, f := range files {
			st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f)))
			if err != nil || !st.Mode().IsRegular() || st.Size() > MaxFileSize {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
			if err != nil || bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0 {
				continue
			}
			// The old whole-file filter, with its ASCII-only folding.
			hay := data
			if p.fold {
				hay = appendLower(nil, data)
			}
			if !containsAll(hay, p.needs) {
				continue
			}
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
				if p.Match(l) {
					out = append(out, fmt.Sprintf("%s:%d:%s", f, n, l))
				}
			}
		}
		if len(out) > 0 {
			return out, tier
		}
	}
	return nil, -1
}

// randomTree writes files of code-like lines: names in several cases,
// CRLF and LF ends, files without a last newline, empty ones, a binary
// one, one too large and non-ASCII text.
func randomTree(t *testing.T, r *rand.Rand, dir string, n int) []string {
	t.Helper()
	words := []string{"Parse", "parse", "PARSE", "Duration", "duration", "query", "All", "queryAll", "query.all", "QUERY_ALL", "x", "é", "Été", "K", "\u212a", "(", ")", "{", "}", " ", " ", "\t", "ParseDuration", "Grow", "buf", "Buffer"}
	var files []string
	for i := range n {
		var b strings.Builder
		lines := r.IntN(40)
		for range lines {
			for range r.IntN(12) {
				b.WriteString(words[r.IntN(len(words))])
			}
			switch r.IntN(6) {
			case 0:
				b.WriteString("\r\n")
			case 1:
				b.WriteString("\n\n")
			default:
				b.WriteString("\n")
			}
		}
		content := b.String()
		if r.IntN(4) == 0 {
			content = strings.TrimSuffix(content, "\n")
		}
		name := fmt.Sprintf("d%d/f%d.go", i%7, i)
		files = append(files, name)
		write(t, dir, name, content)
	}
	write(t, dir, "bin/x.bin", "ParseDuration\x00queryAll")
	write(t, dir, "big.txt", strings.Repeat("y", MaxFileSize)+"\nParseDuration queryAll\n")
	write(t, dir, "empty.go", "")
	files = append(files, "bin/x.bin", "big.txt", "empty.go", "gone.go")
	sortStrings(files)
	return files
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortStrings(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// queries are the tiers search_code asks for: exact, then ignoring case,
// then (for some) a looser expression.
func queries(t *testing.T) [][]Pattern {
	t.Helper()
	var out [][]Pattern
	for _, q := range []string{"ParseDuration", "parseduration", "queryAll", "QUERYALL", "query.all", "Grow(", "x", "xx", "é", "ÉTÉ", "k", "noSuchNameQzx", ") {", "\t", "Parse Duration", "y\ny", "buf\r"} {
		out = append(out, []Pattern{Literal(q, false), Literal(q, true)})
	}
	for _, expr := range []string{`(?i)query[\W_]*all`, `Parse\w*Duration`, `^\s*Grow`, `duration$`, `(?i)k`, `[a-z]+_[a-z]+`, `Parse|Grow`, `noSuch[\W_]*Name`} {
		for _, fold := range []bool{false, true} {
			p, err := Regexp(expr, fold)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, []Pattern{p})
		}
	}
	return out
}

func flat(hits []Hits) []string {
	var out []string
	for _, h := range hits {
		for i, n := range h.Lines {
			out = append(out, fmt.Sprintf("%s:%d:%s", h.File, n, h.Texts[i]))
		}
	}
	return out
}

// The search answers as the line-by-line scan does, with and without the
// index, cold and warm, after edits the index is told of and after writes
// it is asked to verify.
func TestSearchAnswersAsTheLineScan(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	dir := t.TempDir()
	files := randomTree(t, r, dir, 120)
	ctx := context.Background()
	ix := NewIndex(dir)
	check := func(stage string) {
		t.Helper()
		for _, ps := range queries(t) {
			want, wantTier := lineScan(t, dir, files, ps)
			hits, tier, err := Search(ctx, dir, files, ps, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := flat(hits); tier != wantTier || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, without the index, %v: tier %d, %q\nwant tier %d, %q", stage, ps, tier, got, wantTier, want)
			}
			hits, tier, err = ix.Search(ctx, files, ps, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := flat(hits); tier != wantTier || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, with the index, %v: tier %d, %q\nwant tier %d, %q", stage, ps, tier, got, wantTier, want)
			}
		}
	}
	check("cold")
	if ix.Len() != len(files) { // the one that is gone as not searched
		t.Fatalf("indexed %d files of %d", ix.Len(), len(files))
	}
	check("warm")

	// Edits the index is told of, one of them creating the missing file.
	for i, f := range []string{files[3], files[10], "gone.go"} {
		write(t, dir, f, fmt.Sprintf("func NewlyAdded%d() { queryAll() }\n", i))
		ix.Update(f)
	}
	check("after edits")

	// Writes it is not told of (a test run's), then verified. The
	// modification times are moved on so that they differ on file
	// systems of coarse timestamps too.
	later := time.Now().Add(time.Hour)
	for i, f := range []string{files[20], files[30]} {
		write(t, dir, f, fmt.Sprintf("var writtenByATest%d = \"queryAll\"\n", i))
		if err := os.Chtimes(filepath.Join(dir, f), later, later); err != nil {
			t.Fatal(err)
		}
	}
	ix.Verify()
	check("after writes, verified")
}

// Without Verify an index does not see what was written behind its back:
// the verification is what keeps it current after a test run.
func TestIndexNeedsVerifyAfterUnannouncedWrites(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.go", "package a\n")
	files := []string{"a.go"}
	ix := NewIndex(dir)
	ctx := context.Background()
	p := []Pattern{Literal("WrittenLater", false)}
	if hits, _, err := ix.Search(ctx, files, p, Options{}); err != nil || hits != nil {
		t.Fatalf("before: %v, %v", hits, err)
	}
	write(t, dir, "a.go", "package a\n\nvar WrittenLater = 1\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "a.go"), later, later); err != nil {
		t.Fatal(err)
	}
	if hits, _, err := ix.Search(ctx, files, p, Options{}); err != nil || hits != nil {
		t.Fatalf("the filter was not used: %v, %v", hits, err)
	}
	ix.Verify()
	// A search cut short leaves the verification owed.
	cut, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ix.Search(cut, files, p, Options{}); err == nil {
		t.Fatal("a cancelled search reports no error")
	}
	hits, _, err := ix.Search(ctx, files, p, Options{})
	if err != nil || len(hits) != 1 || hits[0].Lines[0] != 3 {
		t.Fatalf("after Verify: %v, %v", hits, err)
	}
}

// Only the first Options.Texts lines of a file keep their text; all keep
// their numbers.
func TestSearchKeepsTextsOfShownLinesOnly(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.go", strings.Repeat("match\nother\n", 500))
	hits, _, err := Search(context.Background(), dir, []string{"a.go"}, []Pattern{Literal("match", false)}, Options{Texts: 3})
	if err != nil || len(hits) != 1 {
		t.Fatalf("%v, %v", hits, err)
	}
	if h := hits[0]; len(h.Lines) != 500 || len(h.Texts) != 3 || h.Lines[499] != 999 || h.Texts[2] != "match" {
		t.Fatalf("lines %d (last %d), texts %q", len(h.Lines), h.Lines[len(h.Lines)-1], h.Texts)
	}
}

// A filter holds every trigram of its file, and few others.
func TestFilter(t *testing.T) {
	var gs gramSet
	text := []byte("func parseduration(s string) (time.duration, error)")
	e := gs.newEntry(text, int64(len(text)), time.Time{})
	for i := 0; i+3 <= len(text); i++ {
		if !e.may(trigrams([][]byte{text[i : i+3]})) {
			t.Fatalf("the trigram %q is not in the filter", text[i:i+3])
		}
	}
	if !e.may(trigrams([][]byte{[]byte("ParseDuration")})) {
		t.Error("a query in upper case is rejected")
	}
	if e.may(trigrams([][]byte{[]byte("noSuchNameQzx")})) {
		t.Error("a query of other trigrams passes")
	}
	if !e.may(nil) || (&entry{skip: true}).may(nil) {
		t.Error("no trigrams: every searched file may match, a skipped one never")
	}
}
