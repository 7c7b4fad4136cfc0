package judge

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/quote"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Language is what the judge's context needs of every repository's
// language driver (a lang.Driver is one): the failing tests' targets, which
// files are its code, and the declarations of its files, found by its
// parser. What a language quotes better itself is a capability below,
// asked for with a type assertion; the judge never asks a driver's name.
type Language interface {
	Resolve(dir, id string) (testrun.Target, error)
	Index(dir string) (*codeindex.Index, error)
	IsSource(rel string) bool
}

// TestQuoter is a driver that quotes a failing test itself, with what runs
// around it (Go's package-level tables, JavaScript's hooks) and the data
// files it names. Without it a test named FILE::CLASS::NAME is quoted from
// its file's declarations.
type TestQuoter interface {
	QuoteTest(dir, id string) []quote.Source
}

// DeclarationsAt is a driver that delimits its own declarations: those of
// src (the file rel) that hold one of lines, by name ("func (r *Repo)
// Parse"). Without it the driver's parser (Index) delimits them.
type DeclarationsAt interface {
	DeclarationsAt(rel, src string, lines map[int]bool) map[string]string
}

// testSources quotes the test id: as the driver quotes it, else from its
// file's declarations.
func testSources(dir string, l Language, id string) []Source {
	if q, ok := l.(TestQuoter); ok {
		return q.QuoteTest(dir, id)
	}
	t, err := l.Resolve(dir, id)
	if err != nil || t.Test == "" {
		return nil
	}
	file, class, fn := nodeFunc(t)
	return fileTestSources(dir, l, file, class, fn)
}

// declarationsOf delimits the declarations of the driver's files.
func declarationsOf(l Language) func(p string) declsAt {
	return func(p string) declsAt {
		if !l.IsSource(p) {
			return nil
		}
		if d, ok := l.(DeclarationsAt); ok {
			return func(src string, lines map[int]bool) map[string]string { return d.DeclarationsAt(p, src, lines) }
		}
		return func(src string, lines map[int]bool) map[string]string { return declsIn(l, p, src, lines) }
	}
}

// nodeFunc splits a file-named test (FILE::CLASS::NAME[params]) into its
// file, its class ("" for a module's function) and its function,
// parameters dropped.
func nodeFunc(t testrun.Target) (file, class, fn string) {
	name, _, _ := strings.Cut(t.Test, "[")
	parts := strings.Split(name, "::")
	fn = parts[len(parts)-1]
	if len(parts) > 1 {
		class = parts[len(parts)-2]
	}
	return t.ImportPath, class, fn
}

// symbolsOf indexes src as the file rel with l's parser, alone in a
// directory of its own (not the checkout: one file, not every one).
func symbolsOf(l Language, rel, src string) []codeindex.Symbol {
	tmp, err := os.MkdirTemp("", "redfix-judge-")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(tmp)
	p := filepath.Join(tmp, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil
	}
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		return nil
	}
	idx, err := l.Index(tmp)
	if err != nil {
		return nil
	}
	return idx.InFile(rel)
}

// lineSpan is lines from to to (1-based, inclusive) of src.
func lineSpan(src string, from, to int) string {
	lines := strings.SplitAfter(src, "\n")
	if from < 1 || to > len(lines) || from > to {
		return ""
	}
	return strings.TrimRight(strings.Join(lines[from-1:to], ""), "\n")
}

// paramsRE is a function's parameter list in its signature.
var paramsRE = regexp.MustCompile(`\(([^)]*)\)`)

// fileTestSources reads the test function fn (of class, when one is named)
// from file, with the fixtures of the same file it takes and the data
// files its strings name.
func fileTestSources(dir string, l Language, file, class, fn string) []Source {
	src, err := untrusted.ReadText(dir, file, quote.MaxSourceFile)
	if err != nil {
		return nil
	}
	syms := symbolsOf(l, file, src)
	var test *codeindex.Symbol
	for i, s := range syms {
		if s.Name == fn && (class == "" && s.Receiver == "" || s.Receiver == class) {
			test = &syms[i]
			break
		}
	}
	if test == nil {
		return nil
	}
	var b strings.Builder
	text := lineSpan(src, test.Line, test.EndLine)
	b.WriteString(text)
	// The fixtures it takes that the file defines.
	if m := paramsRE.FindStringSubmatch(test.Signature); m != nil {
		for _, p := range strings.Split(m[1], ",") {
			name := strings.TrimSpace(strings.SplitN(strings.SplitN(p, ":", 2)[0], "=", 2)[0])
			for _, s := range syms {
				if name != "" && name != "self" && s.Name == name && s.Receiver == "" && s.Kind == codeindex.KindFunc {
					fx := lineSpan(src, s.Line, s.EndLine)
					b.WriteString("\n\n" + fx)
					text += "\n" + fx
				}
			}
		}
	}
	name := test.QualifiedName() + " (" + file + ":" + strconv.Itoa(test.Line) + ")"
	out := []Source{{Name: name, Text: quote.Text(b.String(), quote.MaxTest)}}
	return append(out, quote.DataFiles(dir, path.Dir(file), quote.Strings(text))...)
}

// declsIn are the innermost functions or methods of src (the file rel)
// that hold one of lines, else the classes that do, by name ("method
// Catalog.discount").
func declsIn(l Language, rel, src string, lines map[int]bool) map[string]string {
	out := map[string]string{}
	syms := symbolsOf(l, rel, src)
	// A changed line outside any function, in a class (a field, a
	// decorator, a line between methods), shows the lines around it in
	// the class, not the class whole: a class may run to thousands of
	// lines, and the quote is cut at maxChange.
	inType := map[int]map[int]bool{}
	for line := range lines {
		i := innermost(syms, line)
		if i < 0 {
			continue
		}
		s := syms[i]
		if s.Kind == codeindex.KindFunc || s.Kind == codeindex.KindMethod {
			out[s.Kind+" "+s.QualifiedName()] = lineSpan(src, s.Line, s.EndLine)
			continue
		}
		if inType[i] == nil {
			inType[i] = map[int]bool{}
		}
		inType[i][line] = true
	}
	for i, changed := range inType {
		s := syms[i]
		// Named without its kind: the index calls every class a struct,
		// which is Go's word, not the language's.
		out["in "+s.QualifiedName()] = around(src, s.Line, s.EndLine, changed)
	}
	return out
}

// innermost is the index in syms of the symbol that holds line most
// closely, a function or method before any other kind; -1 when none does.
func innermost(syms []codeindex.Symbol, line int) int {
	best := -1
	for i, s := range syms {
		if line < s.Line || line > s.EndLine {
			continue
		}
		isFn := s.Kind == codeindex.KindFunc || s.Kind == codeindex.KindMethod
		if best < 0 {
			best = i
			continue
		}
		b := syms[best]
		bestFn := b.Kind == codeindex.KindFunc || b.Kind == codeindex.KindMethod
		if isFn && !bestFn || isFn == bestFn && s.EndLine-s.Line < b.EndLine-b.Line {
			best = i
		}
	}
	return best
}

// aroundLines is how many lines around a changed line are shown.
const aroundLines = 3

// around is the lines from..to of src that are within aroundLines of a
// changed line, with the first and the last (the declaration's head and
// end) always shown, and "…" where lines are left out.
func around(src string, from, to int, changed map[int]bool) string {
	lines := strings.SplitAfter(src, "\n")
	show := map[int]bool{from: true, to: true}
	for c := range changed {
		for n := max(from, c-aroundLines); n <= min(to, c+aroundLines); n++ {
			show[n] = true
		}
	}
	var b strings.Builder
	gap := false
	for n := from; n <= to && n <= len(lines); n++ {
		if !show[n] {
			gap = true
			continue
		}
		if gap {
			b.WriteString("…\n")
			gap = false
		}
		b.WriteString(lines[n-1])
	}
	return strings.TrimSuffix(b.String(), "\n")
}
