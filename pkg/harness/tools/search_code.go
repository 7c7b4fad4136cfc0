package tools

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/codesearch"
)

// SearchCode is the tool that searches the repository's text.
const SearchCode = "search_code"

// SearchCodeArgs are search_code's arguments. Path is not offered: a
// model that names a file all the same gets search_code_in_file's answer.
type SearchCodeArgs struct {
	Query string `json:"query" description:"The text or regular expression to find."`
	Regex bool   `json:"regex,omitempty" description:"Treat query as a regular expression."`
	Path  string `json:"path,omitempty" schema:"-"`
}

//go:embed search_code.md
var searchCodeDoc string

var searchCodeTool = Define(SearchCode, KindOther, searchCodeDoc, (*Session).searchCode)

// searchCap is how many matches search_code shows.
const searchCap = 60

func (s *Session) searchCode(ctx context.Context, args SearchCodeArgs) (Observation, error) {
	if args.Path != "" {
		return s.searchCodeInFile(ctx, SearchCodeInFileArgs(args))
	}
	if args.Query == "" {
		return problem("A query is required."), nil
	}
	files, err := s.listFiles(ctx)
	if err != nil {
		return Observation{}, err
	}
	// One pass over the tree tries the exact pattern, then the same
	// ignoring case, then (for a literal of several words) the near one.
	patterns := make([]codesearch.Pattern, 0, 3)
	notes := []string{"", " (no exact match; these match ignoring case)"}
	for _, fold := range []bool{false, true} {
		p, err := pattern(args.Query, args.Regex, fold)
		if err != nil {
			return problem("The regular expression %q is not valid (RE2 syntax): %v.", args.Query, err), nil
		}
		patterns = append(patterns, p)
	}
	if !args.Regex {
		if re, words, ok := nearQuery(args.Query); ok {
			if p, err := codesearch.Regexp(re, false); err == nil {
				patterns = append(patterns, p)
				notes = append(notes, fmt.Sprintf(" (no exact match; these are near matches: the words %s in this order, any case, with or without punctuation between them)", strings.Join(words, ", ")))
			}
		}
	}
	if s.text == nil {
		s.text = codesearch.NewIndex(s.ws.Dir)
	}
	// No more lines of a file are shown than searchCap: the others need
	// only their numbers.
	found, tier, err := s.text.Search(ctx, files, patterns, codesearch.Options{Clip: func(l string) string { return clipLine(l, lineCap) }, Texts: searchCap})
	if err != nil {
		return Observation{}, fmt.Errorf("search %q: %w", args.Query, err)
	}
	hits := make([]fileHits, len(found))
	for i, h := range found {
		hits[i] = fileHits{file: h.File, lines: h.Lines, texts: h.Texts}
	}
	note := ""
	if tier >= 0 {
		note = notes[tier]
	}
	kind := "literal"
	if args.Regex {
		kind = "regex"
	}
	if len(hits) == 0 {
		return Observation{Content: fmt.Sprintf("No match for %q (%s) in the repository.", args.Query, kind), Search: &SearchResult{}}, nil
	}
	s.rankHits(hits, s.definitions(args))
	total := 0
	for _, h := range hits {
		total += len(h.lines)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %s for %q (%s)%s:\n", plural(total, "match", "matches"), plural(len(hits), "file", "files"), args.Query, kind, note)
	res := &SearchResult{}
	shown, shownFiles := 0, 0
	perFile := max(searchCap/len(hits), 5)
	for _, h := range hits {
		if shown >= searchCap {
			break
		}
		shownFiles++
		for i, n := range h.lines {
			if i == perFile || shown >= searchCap {
				if rest := len(h.lines) - i; rest > 0 {
					fmt.Fprintf(&b, "%s: [… %d more in this file; use search_code_in_file]\n", h.file, rest)
				}
				break
			}
			from := b.Len()
			fmt.Fprintf(&b, "%s:%d: %s\n", h.file, n, h.texts[i])
			res.add(SearchHit{File: h.file, Line: n, Text: h.texts[i]}, from, b.Len())
			shown++
		}
	}
	if rest := total - shown; rest > 0 {
		fmt.Fprintf(&b, "[%s not shown", plural(rest, "more match", "more matches"))
		if restFiles := len(hits) - shownFiles; restFiles > 0 {
			fmt.Fprintf(&b, ", in %s more: %s", plural(restFiles, "file", "files"), strings.Join(fileNames(hits[shownFiles:], 10), ", "))
		}
		b.WriteString("; narrow the query]\n")
	}
	return Observation{Content: b.String(), Search: res}, nil
}

func fileNames(hs []fileHits, n int) []string {
	var out []string
	for i, h := range hs {
		if i == n {
			out = append(out, "…")
			break
		}
		out = append(out, h.file)
	}
	return out
}

// identifier is a Go name, or Type.Name.
var identifier = regexp.MustCompile(`^[\pL_][\pL\pN_]*(\.[\pL_][\pL\pN_]*)?$`)

// definitions are the files that declare what a search names, when it
// names an identifier: their lines are where a reader wants to land.
func (s *Session) definitions(args SearchCodeArgs) map[string]bool {
	q := strings.TrimSpace(args.Query)
	if args.Regex || !identifier.MatchString(q) {
		return nil
	}
	idx, err := s.index()
	if err != nil {
		return nil // ranking only: the search stands without it
	}
	defs := map[string]bool{}
	for _, sym := range idx.FindFuncs(q) {
		defs[sym.File] = true
	}
	if !strings.Contains(q, ".") {
		for _, sym := range idx.FindTypes(q) {
			defs[sym.File] = true
		}
	}
	return defs
}

// rankHits orders files by likely relevance: files declaring the name
// searched for, files named in the failures' stack frames, non-test files,
// then by number of matches, then path.
func (s *Session) rankHits(hits []fileHits, defs map[string]bool) {
	inFrames := map[string]bool{}
	for _, f := range s.t.Failures {
		for _, fr := range f.Frames {
			file := fr
			if i := strings.LastIndex(fr, ".go:"); i >= 0 {
				file = fr[:i+3]
			} else if i := strings.LastIndex(fr, ".py:"); i >= 0 {
				file = fr[:i+3]
			}
			inFrames[path.Base(filepath.ToSlash(file))] = true
		}
	}
	score := func(h fileHits) int {
		sc := 0
		if defs[h.file] {
			sc += 4
		}
		if inFrames[path.Base(h.file)] {
			sc += 2
		}
		if !s.isTestFile(h.file) {
			sc++
		}
		return sc
	}
	sort.SliceStable(hits, func(i, j int) bool {
		si, sj := score(hits[i]), score(hits[j])
		if si != sj {
			return si > sj
		}
		if len(hits[i].lines) != len(hits[j].lines) {
			return len(hits[i].lines) > len(hits[j].lines)
		}
		return hits[i].file < hits[j].file
	})
}
