package tools

import (
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
)

// Observation is what an action returned. IsError marks a problem the policy
// can act on (a bad path, an edit that did not apply, a failing test run);
// infrastructure failures are Go errors, not observations.
//
// Content is the tool's answer as text, for models and people. The other
// parts say the same as data, for policies and tools that act on it: they
// never read Content back. Each holds what Content shows: when the loop cuts
// a long Content to its limit, the items the cut took are dropped from them
// too.
type Observation struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Tests is set by run_tests.
	Tests *TestsResult `json:"tests,omitempty"`
	// Edit is set by edit.
	Edit *EditResult `json:"edit,omitempty"`
	// Commit is set by get_diff_details.
	Commit *CommitResult `json:"commit,omitempty"`
	// Listing is set by read_file and go_to_line.
	Listing *ListingResult `json:"listing,omitempty"`
	// Find is set by find_file.
	Find *FindResult `json:"find,omitempty"`
	// Search is set by search_code and search_code_in_file.
	Search *SearchResult `json:"search,omitempty"`
	// Symbols is set by search_class and the search_method actions.
	Symbols *SymbolsResult `json:"symbols,omitempty"`
}

// TestsResult is run_tests' structured result.
type TestsResult struct {
	OK     bool           `json:"ok"`
	Passed []string       `json:"passed,omitempty"`
	Failed []task.Failure `json:"failed,omitempty"`
	Build  []task.Failure `json:"build,omitempty"`
	// NotRun are tests that started and never ended (paused when a panic
	// ended their binary): not failures.
	NotRun []string `json:"not_run,omitempty"`
	// Unknown says which names no package defines.
	Unknown []string `json:"unknown,omitempty"`
	// Suspects are the lines run_tests with localize ranked.
	Suspects []testrun.Suspect `json:"suspects,omitempty"`
	// Stopped: the run did not finish within its bound and was stopped
	// (an edit may make a test loop forever).
	Stopped bool `json:"stopped,omitempty"`
}

// EditResult is edit's structured result.
type EditResult struct {
	Applied bool   `json:"applied"`
	Diff    string `json:"diff,omitempty"`
	// Diagnostics are the static-analysis findings after the edit (build,
	// vet, gofmt); empty when clean.
	Diagnostics string `json:"diagnostics,omitempty"`
}

// CommitResult is get_diff_details' structured result: the commit shown and
// its diff (git's unified diff), as much as the observation shows of it.
type CommitResult struct {
	SHA  string `json:"sha"`
	Diff string `json:"diff,omitempty"`
}

// ListingResult is read_file's and go_to_line's structured result: the
// lines of the file they showed, in order.
type ListingResult struct {
	Path string `json:"path"`
	// Total is how many lines the file has, shown or not.
	Total int    `json:"total"`
	Lines []Line `json:"lines,omitempty"`
	at    []span
}

// Line is a line of a file: its number (from 1) and its text, without the
// line's end.
type Line struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// FindResult is find_file's structured result: the files shown, best
// first.
type FindResult struct {
	Files []string `json:"files,omitempty"`
	at    []span
}

// SearchResult is the structured result of search_code and
// search_code_in_file: the matching lines shown, in the order shown.
type SearchResult struct {
	Hits []SearchHit `json:"hits,omitempty"`
	at   []span
}

// SearchHit is a matching line; Text may be clipped.
type SearchHit struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// SymbolsResult is the structured result of search_class and the
// search_method actions: the declarations found, in the order shown.
type SymbolsResult struct {
	Symbols []codeindex.Symbol `json:"symbols,omitempty"`
	at      []span
}

// span is where, in bytes, a tool wrote an item of a structured result in
// Content.
type span struct{ from, to int }

// line writes line n of a listing to b, numbered, and records it.
func (l *ListingResult) line(b *strings.Builder, n int, text string) {
	from := b.Len()
	fmt.Fprintf(b, "%6d\t%s\n", n, text)
	l.Lines = append(l.Lines, Line{N: n, Text: text})
	l.at = append(l.at, span{from, b.Len()})
}

// add records a file written to Content at [from, to).
func (f *FindResult) add(file string, from, to int) {
	f.Files = append(f.Files, file)
	f.at = append(f.at, span{from, to})
}

// add records a hit written to Content at [from, to).
func (s *SearchResult) add(h SearchHit, from, to int) {
	s.Hits = append(s.Hits, h)
	s.at = append(s.at, span{from, to})
}

// add records a symbol whose location Content names at [from, to).
func (s *SymbolsResult) add(sym codeindex.Symbol, from, to int) {
	s.Symbols = append(s.Symbols, sym)
	s.at = append(s.at, span{from, to})
}

// Clip cuts Content to limit characters as clip.Middle does, and drops from
// the structured parts the items whose text the cut took, whole or in part.
func (o *Observation) Clip(limit int) {
	head, tail := clip.Kept(o.Content, limit)
	if head == len(o.Content) {
		return
	}
	whole := func(s span) bool { return s.to <= head || s.from >= len(o.Content)-tail }
	if l := o.Listing; l != nil {
		l.Lines, l.at = keepWhole(l.Lines, l.at, whole)
	}
	if f := o.Find; f != nil {
		f.Files, f.at = keepWhole(f.Files, f.at, whole)
	}
	if s := o.Search; s != nil {
		s.Hits, s.at = keepWhole(s.Hits, s.at, whole)
	}
	if s := o.Symbols; s != nil {
		s.Symbols, s.at = keepWhole(s.Symbols, s.at, whole)
	}
	o.Content = clip.Middle(o.Content, limit)
}

// keepWhole keeps the items whose span is whole. Items recorded without
// their spans are kept as they are.
func keepWhole[T any](items []T, at []span, whole func(span) bool) ([]T, []span) {
	if len(at) != len(items) {
		return items, at
	}
	var keptItems []T
	var keptAt []span
	for i, it := range items {
		if whole(at[i]) {
			keptItems = append(keptItems, it)
			keptAt = append(keptAt, at[i])
		}
	}
	return keptItems, keptAt
}
