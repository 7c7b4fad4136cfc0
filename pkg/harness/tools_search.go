package harness

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/codesearch"
)

type fileHits struct {
	file  string
	lines []int
	texts []string
}

// grepFile returns the matching lines of one file of the workspace;
// binary and very large files, and links, have none.
func (s *session) grepFile(rel string, match func(string) bool) ([]int, []string) {
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

func (s *session) searchCode(ctx context.Context, args SearchCodeArgs) (Observation, error) {
	if args.Path != "" {
		return s.searchCodeInFile(ctx, args)
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

// identifier is a Go name, or Type.Name.
var identifier = regexp.MustCompile(`^[\pL_][\pL\pN_]*(\.[\pL_][\pL\pN_]*)?$`)

// definitions are the files that declare what a search names, when it
// names an identifier: their lines are where a reader wants to land.
func (s *session) definitions(args SearchCodeArgs) map[string]bool {
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
func (s *session) rankHits(hits []fileHits, defs map[string]bool) {
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

func (s *session) searchCodeInFile(ctx context.Context, args SearchCodeArgs) (Observation, error) {
	if args.Query == "" {
		return problem("A query is required."), nil
	}
	if _, _, bad := s.readText(ctx, args.Path); bad != nil {
		return *bad, nil
	}
	_, rel, _ := s.resolve(args.Path)
	match, err := matcher(args.Query, args.Regex, false)
	if err != nil {
		return problem("The regular expression %q is not valid (RE2 syntax): %v.", args.Query, err), nil
	}
	ns, ts := s.grepFile(rel, match)
	note := ""
	if len(ns) == 0 {
		fold, _ := matcher(args.Query, args.Regex, true)
		if ns, ts = s.grepFile(rel, fold); len(ns) > 0 {
			note = " (no exact match; these match ignoring case)"
		}
	}
	if len(ns) == 0 {
		return Observation{Content: fmt.Sprintf("No match for %q in %s.", args.Query, rel), Search: &SearchResult{}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %q in %s%s:\n", plural(len(ns), "match", "matches"), args.Query, rel, note)
	res := &SearchResult{}
	for i, n := range ns {
		if i == searchFileCap {
			fmt.Fprintf(&b, "[… %d more; narrow the query]\n", len(ns)-searchFileCap)
			break
		}
		from := b.Len()
		fmt.Fprintf(&b, "%s:%d: %s\n", rel, n, ts[i])
		res.add(SearchHit{File: rel, Line: n, Text: ts[i]}, from, b.Len())
	}
	return Observation{Content: b.String(), Search: res}, nil
}

func (s *session) searchSymbol(ctx context.Context, action string, args NameArgs) (Observation, error) {
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return problem("A name is required."), nil
	}
	var rel string
	if action == ActSearchMethodInFile {
		var bad *Observation
		if _, rel, bad = s.readText(ctx, args.Path); bad != nil {
			return *bad, nil
		}
	}
	if action == ActSearchMethodInClass && strings.TrimSpace(args.Class) == "" {
		return problem("A class (the receiver type's name) is required."), nil
	}
	idx, err := s.index()
	if err != nil {
		return Observation{}, fmt.Errorf("index the code of %s: %w", s.ws.Dir, err)
	}
	var (
		found []codeindex.Symbol
		what  string
		// hint suggests names like it, when nothing matched.
		hint func() string
	)
	switch action {
	case ActSearchClass:
		found = idx.FindTypes(name)
		what = fmt.Sprintf("type named %q", name)
		hint = func() string { return suggest(idx.Similar(name, codeindex.KindType, 8)) }
	case ActSearchMethod:
		found = idx.FindFuncs(name)
		what = fmt.Sprintf("function or method named %q", name)
		hint = func() string { return suggest(idx.Similar(name, codeindex.KindFunc, 8)) }
	case ActSearchMethodInFile:
		all := idx.FuncsInFile(rel)
		for _, f := range all {
			if f.Name == name || f.QualifiedName() == name {
				found = append(found, f)
			}
		}
		if len(found) == 0 {
			for _, f := range all {
				if strings.EqualFold(f.Name, name) {
					found = append(found, f)
				}
			}
		}
		what = fmt.Sprintf("function or method named %q in %s", name, rel)
		hint = func() string {
			if len(all) == 0 {
				return " The file declares no Go function."
			}
			return suggest(all)
		}
	case ActSearchMethodInClass:
		found = idx.FindMethod(args.Class, name)
		what = fmt.Sprintf("method %q of type %q", name, args.Class)
		methods := idx.MethodsOf(strings.TrimLeft(args.Class, "*"))
		hint = func() string {
			if len(methods) == 0 {
				return " That type has no methods." + suggest(idx.Similar(args.Class, codeindex.KindType, 8))
			}
			return suggest(methods)
		}
	}
	if len(found) == 0 {
		return problem("No %s.%s", what, hint()), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for the %s:\n", plural(len(found), "match", "matches"), what)
	// Bodies are shown whole while they fit in the observation; the
	// first always gets most of it, the rest only what is left.
	budget := s.h.cfg.OutputLimit - 400 - 120*min(len(found), 40)
	listed := false
	res := &SymbolsResult{}
	for i, sym := range found {
		if i >= fullSymbols || (i > 0 && budget < 600) {
			if !listed {
				b.WriteString("\nMore matches (use search_method_in_file or go_to_line to see them):\n")
				listed = true
			}
			from := b.Len()
			fmt.Fprintf(&b, "%s: %s\n", sym.Location(), sym.Signature)
			res.add(sym, from, b.Len())
			continue
		}
		b.WriteString("\n")
		budget -= s.writeSymbol(&b, idx, sym, max(budget, 1000), res)
	}
	return Observation{Content: b.String(), Symbols: res}, nil
}

func suggest(syms []codeindex.Symbol) string {
	if len(syms) == 0 {
		return ""
	}
	names := make([]string, 0, len(syms))
	for i, s := range syms {
		if i == 12 {
			names = append(names, "…")
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", s.QualifiedName(), s.Location()))
	}
	return " Declared names like it: " + strings.Join(names, ", ") + "."
}

// writeSymbol writes a symbol's location, kind and numbered source, whole
// when it fits in about maxChars characters and up to wholeLines lines, cut
// with a note otherwise; for a type, its methods too. It records the
// symbol, by the line that locates it, in res, and returns the characters
// written.
func (s *session) writeSymbol(b *strings.Builder, idx *codeindex.Index, sym codeindex.Symbol, maxChars int, res *SymbolsResult) int {
	start := b.Len()
	fmt.Fprintf(b, "%s-%d (%s %s)\n", sym.Location(), sym.EndLine, sym.Kind, sym.QualifiedName())
	res.add(sym, start, b.Len())
	data, err := s.ws.ReadText(sym.File, maxReadFile)
	if err == nil {
		lines := splitLines(data)
		from, to := sym.Line, min(sym.EndLine, len(lines))
		if from >= 1 && from <= to {
			last, size := from-1, 0
			for n := from; n <= to && n-from < wholeLines; n++ {
				size += len(lines[n-1]) + 8 // the number's column
				if size > maxChars && n > from {
					break
				}
				last = n
			}
			numbered(b, lines, from, last)
			if last < to {
				fmt.Fprintf(b, "[… %d more lines, to line %d, not shown: the body is longer than an observation holds; use read_file with start_line=%d]\n", to-last, to, last+1)
			}
		}
	}
	if sym.Kind == codeindex.KindStruct || sym.Kind == codeindex.KindType || sym.Kind == codeindex.KindInterface {
		if ms := idx.MethodsOf(sym.Name); len(ms) > 0 {
			names := make([]string, len(ms))
			for i, m := range ms {
				names[i] = fmt.Sprintf("%s (%s)", m.Name, m.Location())
			}
			fmt.Fprintf(b, "Methods: %s\n", strings.Join(names, ", "))
		}
	}
	return b.Len() - start
}
