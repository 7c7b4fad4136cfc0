package tools

import (
	"fmt"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
)

// The symbol searches (search_class and the search_method tools) share
// their index and their answer.

// What a symbol search shows whole.
const (
	wholeLines  = 400 // lines of a symbol's body shown at most, when they fit
	fullSymbols = 3   // symbols shown with their bodies; the rest as locations
)

// symbolIndex is the session's index of the repository's declarations.
func (s *Session) symbolIndex() (*codeindex.Index, error) {
	idx, err := s.index()
	if err != nil {
		return nil, fmt.Errorf("index the code of %s: %w", s.ws.Dir, err)
	}
	return idx, nil
}

// showSymbols is a symbol search's answer: the declarations found, what
// was looked for, and, when none was found, the names like it that hint
// suggests.
func (s *Session) showSymbols(idx *codeindex.Index, found []codeindex.Symbol, what string, hint func() string) Observation {
	if len(found) == 0 {
		return problem("No %s.%s", what, hint())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for the %s:\n", plural(len(found), "match", "matches"), what)
	// Bodies are shown whole while they fit in the observation; the
	// first always gets most of it, the rest only what is left.
	budget := s.env.OutputLimit - 400 - 120*min(len(found), 40)
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
	return Observation{Content: b.String(), Symbols: res}
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
func (s *Session) writeSymbol(b *strings.Builder, idx *codeindex.Index, sym codeindex.Symbol, maxChars int, res *SymbolsResult) int {
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
