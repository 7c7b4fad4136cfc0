package node

import (
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// The functions of a JavaScript or TypeScript file, from the lines the
// policy has seen: function declarations and expressions with a name,
// methods, and arrow functions or function expressions assigned to a name
// (a const, a class field, an object's property). Their bodies are found by
// matching brackets in the file's code with its strings, template literals,
// regular expressions and comments blanked out (jsMask), so that a "}" in a
// string never closes a function.

// jsFunc is a named function of a file and its lines (1-based, inclusive).
type jsFunc struct {
	name       string
	start, end int
}

// jsRegexAfter are the words after which a "/" starts a regular expression.
var jsRegexAfter = map[string]bool{
	"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true, "of": true, "new": true,
	"delete": true, "void": true, "throw": true, "yield": true, "await": true, "instanceof": true,
}

// jsMask is lines with what is not code blanked (strings, template literals
// with their substitutions, regular expressions, comments), each line as
// long as it was. An unknown line stays unknown, and the lines after it are
// read as starting in code.
func jsMask(lines []string) []string {
	out := make([]string, len(lines))
	var m jsMasker
	for li, line := range lines {
		if line == unknown {
			out[li] = unknown
			m = jsMasker{}
			continue
		}
		out[li] = m.mask(line)
	}
	return out
}

// jsMasker is what jsMask knows between lines and between characters.
type jsMasker struct {
	// open: the template literals (true) and their substitutions (false)
	// open at this point, innermost last; depth the brace depth of each
	// substitution.
	open    []bool
	depth   []int
	comment bool
	// prev is the last code character, 'a' after a name or a literal;
	// prevWord the name.
	prev     byte
	prevWord string
}

// mask is line with what is not code blanked.
func (m *jsMasker) mask(line string) string {
	b := []byte(line)
	for i := 0; i < len(b); {
		switch {
		case m.comment:
			i = m.inComment(line, b, i)
		case len(m.open) > 0 && m.open[len(m.open)-1]:
			i = m.inTemplate(line, b, i)
		default:
			i = m.inCode(line, b, i)
		}
	}
	return string(b)
}

// blankJS blanks b[from:to] but its tabs.
func blankJS(b []byte, from, to int) {
	for k := from; k < to && k < len(b); k++ {
		if b[k] != '\t' {
			b[k] = ' '
		}
	}
}

// inComment blanks a block comment's text from i to its end, or to the
// end of the line; it returns where reading goes on.
func (m *jsMasker) inComment(line string, b []byte, i int) int {
	end := strings.Index(line[i:], "*/")
	if end < 0 {
		blankJS(b, i, len(b))
		return len(b)
	}
	blankJS(b, i, i+end+2)
	m.comment = false
	return i + end + 2
}

// inTemplate blanks one character (or escape, or "${") of a template
// literal's text.
func (m *jsMasker) inTemplate(line string, b []byte, i int) int {
	n := 1
	switch {
	case line[i] == '\\':
		n = 2
	case line[i] == '`':
		m.open = m.open[:len(m.open)-1]
		m.prev, m.prevWord = 'a', ""
	case strings.HasPrefix(line[i:], "${"):
		m.open, m.depth = append(m.open, false), append(m.depth, 1)
		n = 2
	}
	blankJS(b, i, i+n)
	return i + n
}

// inCode reads code at i: a comment, string, template or regular
// expression starts, or a token is passed (and blanked inside a
// template's substitution).
func (m *jsMasker) inCode(line string, b []byte, i int) int {
	c := line[i]
	inSub := len(m.open) > 0
	switch {
	case c == ' ' || c == '\t' || c == '\r':
		return i + 1
	case strings.HasPrefix(line[i:], "//"):
		blankJS(b, i, len(b))
		return len(b)
	case strings.HasPrefix(line[i:], "/*"):
		m.comment = true
		blankJS(b, i, i+2)
		return i + 2
	case c == '\'' || c == '"':
		end := jsStringEnd(line, i)
		if end < 0 {
			end = len(b)
		}
		blankJS(b, i, end)
		m.prev, m.prevWord = 'a', ""
		return end
	case c == '`':
		m.open = append(m.open, true)
		blankJS(b, i, i+1)
		return i + 1
	case c == '/' && (m.prev == 0 || strings.IndexByte("(,=:[!&|?{};+-*%<>~^", m.prev) >= 0 || jsRegexAfter[m.prevWord]):
		if end := jsRegexEnd(line, i); end > 0 {
			blankJS(b, i, end)
			m.prev, m.prevWord = 'a', ""
			return end
		}
	case inSub && c == '{':
		m.depth[len(m.depth)-1]++
	case inSub && c == '}':
		if m.depth[len(m.depth)-1]--; m.depth[len(m.depth)-1] == 0 {
			m.open, m.depth = m.open[:len(m.open)-1], m.depth[:len(m.depth)-1]
		}
	}
	n := 1
	if end := jsIdentEnd(line, i); end > i && !(c >= '0' && c <= '9') {
		m.prev, m.prevWord, n = 'a', line[i:end], end-i
	} else if c >= '0' && c <= '9' {
		end, _ := jsNumber(line, i)
		m.prev, m.prevWord, n = 'a', "", end-i
	} else {
		m.prev, m.prevWord = c, ""
	}
	if inSub {
		blankJS(b, i, i+n)
	}
	return i + n
}

// Heads of named functions, on masked lines: a function declaration or a
// named function expression; a name given a function or an arrow function
// (const, let, var; a class field or an object's property); a method.
var (
	jsFunctionRE = regexp.MustCompile(`\bfunction\b\s*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^(]*>)?\s*\(`)
	jsAssignRE   = regexp.MustCompile(`^\s*(?:(?:export|default|declare|public|private|protected|static|readonly|override)\s+)*(?:(?:const|let|var)\s+)?(#?[A-Za-z_$][\w$]*)\s*(?:\??:\s*[^=]*?)?\s*[=:]\s*(?:async\s+)?(?:function\b|(?:<[^(]*>\s*)?\(|[A-Za-z_$][\w$]*\s*=>)`)
	jsMethodRE   = regexp.MustCompile(`^\s*(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)\s+)*\*?\s*(#?[A-Za-z_$][\w$]*)\s*(?:<[^(]*>)?\s*\(`)
)

// jsControl are the words that look like a method's name before "(" and
// are not.
var jsControl = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "catch": true, "function": true, "return": true,
	"with": true, "super": true, "typeof": true, "await": true, "new": true, "delete": true, "void": true, "do": true,
}

// jsText is masked lines as one text, with each line's offset; unknown
// lines are empty.
type jsText struct {
	text  string
	start []int // start[i] is line i+1's offset
	known []bool
}

func newJSText(masked []string) jsText {
	var b strings.Builder
	t := jsText{start: make([]int, len(masked)), known: make([]bool, len(masked))}
	for i, l := range masked {
		t.start[i] = b.Len()
		if l != unknown {
			t.known[i] = true
			b.WriteString(l)
		}
		b.WriteByte('\n')
	}
	t.text = b.String()
	return t
}

// lineOf is the 1-based line of offset off.
func (t jsText) lineOf(off int) int {
	lo, hi := 0, len(t.start)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if t.start[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

// match is the offset of the bracket closing the one at off, -1 if none.
func (t jsText) match(off int) int {
	depth := 0
	for i := off; i < len(t.text); i++ {
		switch t.text[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
			if depth < 0 {
				return -1
			}
		}
	}
	return -1
}

// skipSpace is the offset of the first character from off that is not
// blank.
func (t jsText) skipSpace(off int) int {
	for off < len(t.text) && strings.IndexByte(" \t\r\n", t.text[off]) >= 0 {
		off++
	}
	return off
}

// bodyAfterParams is the end of the function whose parameters open at off:
// its body's closing brace, after an optional return type. ok is false
// when no body follows (a call, an overload's signature).
func (t jsText) bodyAfterParams(off int) (end int, ok bool) {
	close := t.match(off)
	if close < 0 {
		return 0, false
	}
	i := t.skipSpace(close + 1)
	if i < len(t.text) && t.text[i] == ':' {
		if i, ok = t.returnTypeEnd(i + 1); !ok {
			return 0, false
		}
	}
	if strings.HasPrefix(t.text[i:], "=>") {
		return t.arrowEnd(i + 2)
	}
	if i >= len(t.text) || t.text[i] != '{' {
		return 0, false
	}
	end = t.match(i)
	return end, end >= 0
}

// returnTypeEnd is the offset of the body's "{" or the arrow's "=>" after
// a return type that starts at off, past its brackets and angles.
func (t jsText) returnTypeEnd(off int) (int, bool) {
	angle := 0
	for i := off; i < len(t.text); i++ {
		switch c := t.text[i]; c {
		case '<':
			angle++
		case '>':
			if angle > 0 {
				angle--
			}
		case '(', '[':
			if i = t.match(i); i < 0 {
				return 0, false
			}
		case '=':
			switch {
			case !strings.HasPrefix(t.text[i:], "=>"):
				return 0, false
			case angle == 0:
				return i, true // an arrow function's
			}
			i++ // a function type's, in a type argument
		case ';', ')', '}':
			return 0, false
		case '{':
			if angle == 0 {
				return i, true
			}
			if i = t.match(i); i < 0 {
				return 0, false
			}
		}
	}
	return 0, false
}

// arrowEnd is the end of an arrow function's body that starts after "=>"
// at off: its block's closing brace, or its expression's end (the end of
// the line where its brackets are closed, or what closes a bracket it is
// in, or a ";").
func (t jsText) arrowEnd(off int) (int, bool) {
	i := t.skipSpace(off)
	if i < len(t.text) && t.text[i] == '{' {
		end := t.match(i)
		return end, end >= 0
	}
	depth := 0
	for ; i < len(t.text); i++ {
		switch t.text[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i - 1, true
			}
			depth--
		case ';', ',':
			if depth == 0 {
				return i, true
			}
		case '\n':
			if depth == 0 {
				return i - 1, true
			}
		}
	}
	return len(t.text) - 1, true
}

// jsFuncs are the named functions of masked lines, in the file's order.
func jsFuncs(masked []string) []jsFunc {
	t := newJSText(masked)
	var out []jsFunc
	seen := map[int]bool{} // heads found, by the offset of their parameters
	addAt := func(name string, head, params int) {
		if seen[params] || jsControl[name] {
			return
		}
		seen[params] = true
		end, ok := t.bodyAfterParams(params)
		if !ok {
			return
		}
		out = append(out, jsFunc{name: name, start: t.lineOf(head), end: t.lineOf(end)})
	}
	for i, l := range masked {
		if !t.known[i] {
			continue
		}
		at := t.start[i]
		for _, m := range jsFunctionRE.FindAllStringSubmatchIndex(l, -1) {
			addAt(l[m[2]:m[3]], at, at+m[1]-1)
		}
		if m := jsAssignRE.FindStringSubmatchIndex(l); m != nil {
			name, head := l[m[2]:m[3]], l[:m[1]]
			switch {
			case strings.HasSuffix(head, "function"):
				if p := strings.IndexByte(l[m[1]:], '('); p >= 0 {
					addAt(name, at, at+m[1]+p)
				}
			case strings.HasSuffix(head, "("):
				addAt(name, at, at+m[1]-1)
			case !seen[at+m[1]] && !jsControl[name]: // x => …: one parameter
				seen[at+m[1]] = true
				if end, ok := t.arrowEnd(at + m[1]); ok {
					out = append(out, jsFunc{name: name, start: i + 1, end: t.lineOf(end)})
				}
			}
			continue
		}
		if m := jsMethodRE.FindStringSubmatchIndex(l); m != nil {
			addAt(l[m[2]:m[3]], at, at+m[1]-1)
		}
	}
	// A function whose lines are not all known has no known end.
	kept := out[:0]
	for _, f := range out {
		whole := true
		for n := f.start; n <= f.end; n++ {
			whole = whole && t.known[n-1]
		}
		if whole {
			kept = append(kept, f)
		}
	}
	return kept
}

// unknown marks a line of a file no observation has shown.
const unknown = "\x00unknown"

// jsFuncSpan is the innermost named function of a JavaScript or TypeScript
// file holding line n.
func jsFuncSpan(f dialect.Lines, n int, cache *any) (start, end int, name string, ok bool) {
	for _, fn := range jsAnalysis(f, cache).funcs {
		if fn.start <= n && n <= fn.end && (!ok || fn.end-fn.start < end-start) {
			start, end, name, ok = fn.start, fn.end, fn.name, true
		}
	}
	return start, end, name, ok
}

// jsFuncMap is the file's functions by name, the first of a name kept.
func jsFuncMap(f dialect.Lines, cache *any) map[string][2]int {
	out := map[string][2]int{}
	for _, fn := range jsAnalysis(f, cache).funcs {
		if _, dup := out[fn.name]; !dup {
			out[fn.name] = [2]int{fn.start, fn.end}
		}
	}
	return out
}

// jsCode reports whether line n of a JavaScript file holds code: not a line
// wholly inside a comment, a string or a template literal.
func jsCode(f dialect.Lines, n int, cache *any) bool {
	masked := jsAnalysis(f, cache).masked
	return n >= 1 && n <= len(masked) && strings.TrimSpace(masked[n-1]) != ""
}

// jsAnalysis is the file's masked lines and functions, for its lines as
// they are: those of cache when it holds them, else found and kept there.
func jsAnalysis(f dialect.Lines, cache *any) *jsCache {
	lines := make([]string, f.Len())
	for i := range lines {
		t, ok := f.Line(i + 1)
		if !ok {
			t = unknown
		}
		lines[i] = t
	}
	key := strings.Join(lines, "\n")
	if c, ok := (*cache).(*jsCache); ok && c.key == key {
		return c
	}
	masked := jsMask(lines)
	c := &jsCache{key: key, masked: masked, funcs: jsFuncs(masked)}
	*cache = c
	return c
}

// jsCache is a file's masked lines and functions, and the text they were
// found in.
type jsCache struct {
	key    string
	masked []string
	funcs  []jsFunc
}

// jsCallEnd is the line closing the call that opens on line n (an it or
// test with its callback): where the first "(" of the line is closed.
func jsCallEnd(f dialect.Lines, n int, cache *any) (int, bool) {
	masked := jsAnalysis(f, cache).masked
	t := newJSText(masked)
	if n < 1 || n > len(masked) || !t.known[n-1] {
		return 0, false
	}
	p := strings.IndexByte(masked[n-1], '(')
	if p < 0 {
		return 0, false
	}
	end := t.match(t.start[n-1] + p)
	if end < 0 {
		return 0, false
	}
	e := t.lineOf(end)
	for k := n; k <= e; k++ {
		if !t.known[k-1] {
			return 0, false
		}
	}
	return e, true
}
