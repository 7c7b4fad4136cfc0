package offline

import "github.com/redfix/redfix/pkg/harness/offline/dialect"

// unknown marks a line of a file whose text no observation has shown.
const unknown = "\x00unknown"

// fileModel is what the policy knows of one file: the text of the lines
// observations have shown.
type fileModel struct {
	path  string
	lines []string         // lines[i] is line i+1; unknown where not seen
	d     *dialect.Dialect // the file's language; nil when no driver owns it
	cache any              // what the dialect keeps of the lines as they were
}

// newFileModel is the model of the file at path, of the language d (nil
// for none).
func newFileModel(path string, d *dialect.Dialect) *fileModel {
	return &fileModel{path: path, d: d}
}

// modelLines is a model as its dialect reads it.
type modelLines struct{ f *fileModel }

func (l modelLines) Line(n int) (string, bool) { return l.f.line(n) }
func (l modelLines) Len() int                  { return len(l.f.lines) }

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
	return &fileModel{path: f.path, d: f.d, lines: append([]string(nil), f.lines...)}
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

// funcSpan is the span of the function holding line n, as the file's
// language finds it, and its name. ok is false outside functions, and in
// a file no driver owns.
func (f *fileModel) funcSpan(n int) (start, end int, name string, ok bool) {
	if f.d == nil {
		return 0, 0, "", false
	}
	return f.d.FuncSpan(modelLines{f}, n, &f.cache)
}

// code reports whether line n holds code (not a comment's or a string's
// line), as the file's language reads it.
func (f *fileModel) code(n int) bool {
	return f.d == nil || f.d.Code == nil || f.d.Code(modelLines{f}, n, &f.cache)
}

// source reports a file of code the templates can change.
func (f *fileModel) source() bool {
	return sourceIn(f.d, f.path)
}

// funcs lists the file's function declarations: name → [start, end].
func (f *fileModel) funcs() map[string][2]int {
	out := map[string][2]int{}
	if f.d == nil {
		return out
	}
	if f.d.Funcs != nil {
		return f.d.Funcs(modelLines{f}, &f.cache)
	}
	for i, t := range f.lines {
		if m := f.d.Def.FindStringSubmatch(t); m != nil {
			if s, e, _, ok := f.funcSpan(i + 1); ok {
				out[m[1]] = [2]int{s, e}
			}
		}
	}
	return out
}
