package judge

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Language is what the judge's context needs of the repository's language
// driver (a lang.Driver): the failing tests' targets, and the declarations
// of its files, found by its parser.
type Language interface {
	Resolve(dir, id string) (testrun.Target, error)
	Index(dir string) (*codeindex.Index, error)
	IsSource(rel string) bool
}

// WithContextIn is WithContext for a repository in l's language. Tests
// named by file (pytest's node ids, "tests/test_x.py::TestC::test_y[p]")
// are read from their file: the test function, the fixtures of that file
// it takes, and the data files its strings name; each changed function or
// method of the language's files is shown before and after the patch, as
// l's parser delimits it. Go's tests and files are read as WithContext
// reads them. A JavaScript or TypeScript test ("src/price.test.ts::price >
// applies the discount") is quoted with the hooks that run before it
// (jsTestSources).
func WithContextIn(dir string, l Language, in Input) Input {
	if len(in.Tests) == 0 {
		seen := map[string]bool{}
		for _, id := range in.Task.Tests() {
			t, err := l.Resolve(dir, id)
			if file, name, ok := jsTestID(t, err, id); ok {
				if key := file + "::" + name; !seen[key] {
					seen[key] = true
					in.Tests = append(in.Tests, jsTestSources(dir, file, name)...)
				}
				continue
			}
			if err == nil && isJSFile(t.ImportPath) {
				continue // a whole file of tests: no one test to quote
			}
			if err != nil || !task.IsTestFilePath(t.ImportPath) {
				in.Tests = append(in.Tests, testSources(dir, id)...)
				continue
			}
			file, class, fn := nodeFunc(t)
			if key := file + "::" + class + "::" + fn; !seen[key] {
				seen[key] = true
				in.Tests = append(in.Tests, fileTestSources(dir, l, file, class, fn)...)
			}
		}
	}
	if len(in.Code) == 0 {
		if files, err := unidiff.Parse(in.Patch); err == nil {
			in.Code = changes(dir, files, func(p string) declsAt {
				if !l.IsSource(p) {
					return nil
				}
				return func(src string, lines map[int]bool) map[string]string { return declsIn(l, p, src, lines) }
			})
		}
	}
	return in
}

// jsTestID is the file and full name of a JavaScript or TypeScript test:
// its target's, or when the driver cannot resolve it (a name its file
// does not hold literally), its canonical id's.
func jsTestID(t testrun.Target, err error, id string) (file, name string, ok bool) {
	if err == nil {
		return t.ImportPath, t.Test, isJSFile(t.ImportPath) && t.Test != ""
	}
	file, name, ok = strings.Cut(id, "::")
	return file, name, ok && isJSFile(file) && name != ""
}

// nodeFunc splits a file-named test into its file, its class ("" for a
// module's function) and its function, parameters dropped.
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

// quoted are the string literals of Python-like source, for the data
// files a test names.
var quoted = regexp.MustCompile(`"([^"\\\n]{1,200})"|'([^'\\\n]{1,200})'`)

// paramsRE is a function's parameter list in its signature.
var paramsRE = regexp.MustCompile(`\(([^)]*)\)`)

// fileTestSources reads the test function fn (of class, when one is named)
// from file, with the fixtures of the same file it takes and the data
// files its strings name.
func fileTestSources(dir string, l Language, file, class, fn string) []Source {
	src, err := untrusted.ReadText(dir, file, maxSourceFile)
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
	var lits []string
	for _, m := range quoted.FindAllStringSubmatch(text, -1) {
		lits = append(lits, m[1]+m[2])
	}
	name := test.QualifiedName() + " (" + file + ":" + strconv.Itoa(test.Line) + ")"
	out := []Source{{Name: name, Text: capText(b.String(), maxTestSource)}}
	return append(out, dataFiles(dir, filepath.Join(dir, filepath.FromSlash(path.Dir(file))), lits)...)
}

// declsIn are the innermost functions or methods of src (the file rel)
// that hold one of lines, else the classes that do, by name ("method
// Catalog.discount").
func declsIn(l Language, rel, src string, lines map[int]bool) map[string]string {
	out := map[string]string{}
	syms := symbolsOf(l, rel, src)
	for line := range lines {
		var best *codeindex.Symbol
		for i, s := range syms {
			if line < s.Line || line > s.EndLine {
				continue
			}
			isFn := s.Kind == codeindex.KindFunc || s.Kind == codeindex.KindMethod
			bestFn := best != nil && (best.Kind == codeindex.KindFunc || best.Kind == codeindex.KindMethod)
			switch {
			case best == nil, isFn && !bestFn, isFn == bestFn && s.EndLine-s.Line < best.EndLine-best.Line:
				best = &syms[i]
			}
		}
		if best != nil {
			out[best.Kind+" "+best.QualifiedName()] = lineSpan(src, best.Line, best.EndLine)
		}
	}
	return out
}
