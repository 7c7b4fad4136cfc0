package offline

import (
	"regexp"
	"strings"
)

// unknown marks a line of a file whose text no observation has shown.
const unknown = "\x00unknown"

// fileModel is what the policy knows of one file: the text of the lines
// observations have shown.
type fileModel struct {
	path  string
	lines []string // lines[i] is line i+1; unknown where not seen
	js    *jsCache // a JavaScript file's functions, for the lines as they were
}

func newFileModel(path string) *fileModel { return &fileModel{path: path} }

// set records line n's text, which an observation showed.
func (f *fileModel) set(n int, text string) {
	for len(f.lines) < n {
		f.lines = append(f.lines, unknown)
	}
	f.lines[n-1] = text
}

// extend makes the model total lines long, the lines no observation has
// shown unknown, so that a listing cut short does not pass for the whole
// file.
func (f *fileModel) extend(total int) {
	for len(f.lines) < total {
		f.lines = append(f.lines, unknown)
	}
}

// line returns line n's text and whether it is known.
func (f *fileModel) line(n int) (string, bool) {
	if n < 1 || n > len(f.lines) || f.lines[n-1] == unknown {
		return "", false
	}
	return f.lines[n-1], true
}

// complete reports whether every line up to the last one seen is known.
func (f *fileModel) complete() bool {
	if len(f.lines) == 0 {
		return false
	}
	for _, l := range f.lines {
		if l == unknown {
			return false
		}
	}
	return true
}

func (f *fileModel) clone() *fileModel {
	return &fileModel{path: f.path, lines: append([]string(nil), f.lines...)}
}

// find returns the 1-based starts of every occurrence of seq in lines.
func find(lines, seq []string) []int {
	var at []int
	if len(seq) == 0 {
		return nil
	}
outer:
	for i := 0; i+len(seq) <= len(lines); i++ {
		for j, s := range seq {
			if lines[i+j] != s {
				continue outer
			}
		}
		at = append(at, i+1)
	}
	return at
}

// funcSpan is the span of the top-level declaration holding line n: from its
// "func" line to its closing "}" at column 0; in a Python file, of the
// innermost function or method holding it (pyFuncSpan); in a JavaScript
// or TypeScript file, of the innermost named function (jsFuncSpan). ok is
// false outside functions.
func (f *fileModel) funcSpan(n int) (start, end int, name string, ok bool) {
	if strings.HasSuffix(f.path, ".py") {
		return f.pyFuncSpan(n)
	}
	if isJS(f.path) {
		return f.jsFuncSpan(n)
	}
	for s := n; s >= 1; s-- {
		t, known := f.line(s)
		if !known {
			return 0, 0, "", false
		}
		if s != n && t == "}" {
			return 0, 0, "", false
		}
		if m := funcDeclRE.FindStringSubmatch(t); m != nil {
			for e := s; e <= len(f.lines); e++ {
				if te, _ := f.line(e); te == "}" || (e == s && strings.HasSuffix(te, "}")) {
					if e < n {
						return 0, 0, "", false
					}
					return s, e, m[1], true
				}
			}
			return s, len(f.lines), m[1], true
		}
	}
	return 0, 0, "", false
}

var funcDeclRE = regexp.MustCompile(`^func\s+(?:\([^)]*\)\s*)?(\w+)`)

// funcs lists the file's function declarations: name → [start, end].
func (f *fileModel) funcs() map[string][2]int {
	out := map[string][2]int{}
	if isJS(f.path) {
		for _, fn := range f.jsFuncList() {
			if _, dup := out[fn.name]; !dup {
				out[fn.name] = [2]int{fn.start, fn.end}
			}
		}
		return out
	}
	re := funcDeclRE
	if strings.HasSuffix(f.path, ".py") {
		re = pyDefRE
	}
	for i, t := range f.lines {
		if m := re.FindStringSubmatch(t); m != nil {
			if s, e, _, ok := f.funcSpan(i + 1); ok {
				out[m[1]] = [2]int{s, e}
			}
		}
	}
	return out
}
