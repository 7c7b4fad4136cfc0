package python

import (
	"go/token"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// Python's tokens, for the repair templates. The templates work on one line
// at a time, which a whole-file parser cannot take (a line is rarely a
// statement of its own: "if qty > t.min_qty:" lacks its body), so this is a
// lexer of Python's tokens as the language reference defines them, giving
// go/token's kinds to the operators Go shares (<, <=, ==, +=, …) and to the
// keywords the templates care about ("and" is LAND, "not" NOT, "if" and
// "elif" IF, "def" and "class" FUNC). A line inside a multi-line string, or
// with a character Python has no token for, does not scan.

// pyKeyword is the kind of the keywords no template changes: not an
// operand, so that "return -1" is not read as a subtraction.
const pyKeyword = token.DEFAULT

// pyOther is the kind of Python's operators no template changes (**, @,
// ~, ->, ...).
const pyOther = token.ELLIPSIS

var pyKeywords = map[string]token.Token{
	"and": token.LAND, "or": token.LOR, "not": token.NOT,
	"if": token.IF, "elif": token.IF, "else": token.ELSE,
	"def": token.FUNC, "class": token.FUNC, "return": token.RETURN, "for": token.FOR,
	"import": token.IMPORT, "from": token.IMPORT,
	"as": pyKeyword, "assert": pyKeyword, "async": pyKeyword, "await": pyKeyword, "break": pyKeyword,
	"continue": pyKeyword, "del": pyKeyword, "except": pyKeyword, "finally": pyKeyword, "global": pyKeyword,
	"in": pyKeyword, "is": pyKeyword, "lambda": pyKeyword, "nonlocal": pyKeyword, "pass": pyKeyword,
	"raise": pyKeyword, "try": pyKeyword, "while": pyKeyword, "with": pyKeyword, "yield": pyKeyword,
}

// pyOps are Python's operators and delimiters, longest first.
var pyOps = []struct {
	text string
	tok  token.Token
}{
	{"**=", pyOther}, {"//=", token.QUO_ASSIGN}, {">>=", token.SHR_ASSIGN}, {"<<=", token.SHL_ASSIGN}, {"...", pyOther},
	{"**", pyOther}, {"//", token.QUO}, {"==", token.EQL}, {"!=", token.NEQ}, {"<=", token.LEQ}, {">=", token.GEQ},
	{"+=", token.ADD_ASSIGN}, {"-=", token.SUB_ASSIGN}, {"*=", token.MUL_ASSIGN}, {"/=", token.QUO_ASSIGN},
	{"%=", token.REM_ASSIGN}, {"&=", token.AND_ASSIGN}, {"|=", token.OR_ASSIGN}, {"^=", token.XOR_ASSIGN},
	{"@=", pyOther}, {"->", pyOther}, {":=", token.DEFINE}, {"<<", token.SHL}, {">>", token.SHR},
	{"+", token.ADD}, {"-", token.SUB}, {"*", token.MUL}, {"/", token.QUO}, {"%", token.REM},
	{"<", token.LSS}, {">", token.GTR}, {"=", token.ASSIGN}, {"&", token.AND}, {"|", token.OR}, {"^", token.XOR},
	{"~", pyOther}, {"@", pyOther}, {"(", token.LPAREN}, {")", token.RPAREN}, {"[", token.LBRACK},
	{"]", token.RBRACK}, {"{", token.LBRACE}, {"}", token.RBRACE}, {",", token.COMMA}, {":", token.COLON},
	{".", token.PERIOD}, {";", token.SEMICOLON},
}

// scanPython tokenizes one line of Python.
func scanPython(line string) ([]dialect.Tok, bool) {
	var toks []dialect.Tok
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\r':
			i++
			continue
		case c == '#':
			toks = append(toks, dialect.Tok{Off: i, End: len(line), Tok: token.COMMENT, Lit: line[i:]})
			return toks, true
		case c == '\\' && strings.TrimSpace(line[i+1:]) == "":
			return toks, true // a continuation
		}
		if end, ok := pyString(line, i); ok {
			if end < 0 {
				return toks, false // a string that goes on past the line
			}
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: token.STRING, Lit: line[i:end]})
			i = end
			continue
		}
		if c >= '0' && c <= '9' || c == '.' && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9' {
			end, kind := pyNumber(line, i)
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: kind, Lit: line[i:end]})
			i = end
			continue
		}
		if r, n := utf8.DecodeRuneInString(line[i:]); r == '_' || unicode.IsLetter(r) {
			end := i + n
			for end < len(line) {
				r, n := utf8.DecodeRuneInString(line[end:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				end += n
			}
			word := line[i:end]
			kind, ok := pyKeywords[word]
			if !ok {
				kind = token.IDENT
			}
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: kind, Lit: word})
			i = end
			continue
		}
		matched := false
		for _, op := range pyOps {
			if strings.HasPrefix(line[i:], op.text) {
				toks = append(toks, dialect.Tok{Off: i, End: i + len(op.text), Tok: op.tok})
				i += len(op.text)
				matched = true
				break
			}
		}
		if !matched {
			return toks, false // "!", "$", "?", a backquote: not Python
		}
	}
	return toks, true
}

// pyString reports whether a string literal starts at i (with its prefix:
// r, b, u, f and their pairs, in either case) and where it ends: -1 when
// it is not closed on the line (a triple-quoted string that goes on, or a
// broken one).
func pyString(line string, i int) (end int, ok bool) {
	j := i
	for j < len(line) && j-i < 2 && strings.IndexByte("rRbBuUfF", line[j]) >= 0 {
		j++
	}
	if j >= len(line) || (line[j] != '\'' && line[j] != '"') {
		return 0, false
	}
	prefix := strings.ToLower(line[i:j])
	if len(prefix) == 2 && prefix != "rb" && prefix != "br" && prefix != "fr" && prefix != "rf" {
		return 0, false
	}
	q := line[j : j+1]
	if strings.HasPrefix(line[j:], q+q+q) {
		q = q + q + q
	}
	k := j + len(q)
	for k < len(line) {
		switch {
		case line[k] == '\\' && k+1 < len(line):
			// An escape; in a raw string the backslash stays, but it
			// still keeps the quote after it in the string.
			k += 2
		case strings.HasPrefix(line[k:], q):
			return k + len(q), true
		default:
			k++
		}
	}
	return -1, true
}

// pyNumber scans a number at i: an integer (decimal, 0x, 0o, 0b, with
// underscores) is INT, anything with a point, an exponent or a j FLOAT.
func pyNumber(line string, i int) (end int, kind token.Token) {
	end, kind = i, token.INT
	for end < len(line) {
		c := line[end]
		switch {
		case c >= '0' && c <= '9' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if (c == 'e' || c == 'E') && !strings.HasPrefix(strings.ToLower(line[i:]), "0x") {
				kind = token.FLOAT
				if end+1 < len(line) && (line[end+1] == '+' || line[end+1] == '-') {
					end++
				}
			}
			if c == 'j' || c == 'J' {
				kind = token.FLOAT
			}
			end++
		case c == '.':
			kind = token.FLOAT
			end++
		default:
			return end, kind
		}
	}
	return end, kind
}

// RepairDialect is Python as the offline policy's repair templates read
// it (the capability pkg/harness/offline asks for): .py files; test_*.py,
// *_test.py, conftest.py and those under a tests or test directory tests;
// a line tokenized by the lexer above; a function from its def line to
// the last line indented under it; a docstring's lines no code.
func (Driver) RepairDialect() *dialect.Dialect { return &pyDialect }

var pyDialect = dialect.Dialect{
	Name:   "python",
	Owns:   func(p string) bool { return strings.HasSuffix(p, ".py") },
	IsTest: isTestPath,
	Scan:   scanPython,
	Skip: func(trimmed string) bool {
		return strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "import ") ||
			strings.HasPrefix(trimmed, "from ") || strings.HasPrefix(trimmed, "@") || strings.HasPrefix(trimmed, "class ")
	},
	Decl: func(_ string, toks []dialect.Tok) bool {
		return toks[0].Tok == token.FUNC || toks[0].Lit == "async" && len(toks) > 1 && toks[1].Tok == token.FUNC
	},
	Spell: func(_ string, t token.Token) string {
		switch t {
		case token.LAND:
			return "and"
		case token.LOR:
			return "or"
		}
		return t.String()
	},
	Bools:      [2]string{"False", "True"},
	Not:        "not",
	Negate:     negatePyIf,
	LenBuiltin: true,
	Code:       pyCode,
	FuncSpan:   pyFuncSpan,
	Def:        pyDefRE,
	Declares:   regexp.MustCompile(`^\s*(?:(?:async\s+)?def\s+|class\s+)([A-Za-z_$][\w$]*)`),
	DefLine: func(line string, first bool) bool {
		return first && strings.HasPrefix(line, "func ") || pyDefRE.MatchString(line)
	},
	NotCall:  func(name string) bool { return pyNotCalls[name] || strings.HasPrefix(name, "test_") },
	TestFunc: regexp.MustCompile(`^(?:async )?def (test\w*)\(`),
}

// isTestPath reports a file of tests as the repair templates leave it:
// test_*.py, *_test.py, conftest.py, and the .py files under a tests or
// test directory.
func isTestPath(p string) bool {
	if !strings.HasSuffix(p, ".py") {
		return false
	}
	base := path.Base(p)
	if strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" {
		return true
	}
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if seg == "tests" || seg == "test" {
			return true
		}
	}
	return false
}

// negatePyIf negates the condition of an "if cond:" or "elif cond:" line
// whose condition is not a single comparison or a negation already (other
// templates cover those).
func negatePyIf(line string, toks []dialect.Tok) (dialect.Mutation, bool) {
	if n := len(toks); n > 0 && toks[n-1].Tok == token.COMMENT {
		toks = toks[:n-1]
	}
	if len(toks) < 3 || toks[0].Tok != token.IF || toks[len(toks)-1].Tok != token.COLON {
		return dialect.Mutation{}, false
	}
	cond := toks[1 : len(toks)-1]
	simple := true
	cmps, logic := 0, 0
	for _, t := range cond {
		switch t.Tok {
		case token.DEFINE, token.COLON, token.SEMICOLON, pyKeyword:
			return dialect.Mutation{}, false
		case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
			cmps++
			simple = false
		case token.LAND, token.LOR:
			logic++
			simple = false
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.AND, token.OR, token.XOR, pyOther:
			simple = false
		}
	}
	if cond[0].Tok == token.NOT || (cmps == 1 && logic == 0) {
		return dialect.Mutation{}, false
	}
	return dialect.Negated(line, cond, "not ", simple), true
}

// pyDefRE is a Python function's or method's def line.
var pyDefRE = regexp.MustCompile(`^\s*(?:async\s+)?def\s+(\w+)`)

// indentOf is the width of a line's leading blanks (a tab as 8, as
// Python's tokenizer counts it).
func indentOf(s string) int {
	w := 0
	for _, c := range s {
		switch c {
		case ' ':
			w++
		case '\t':
			w += 8 - w%8
		default:
			return w
		}
	}
	return w
}

// pyFuncSpan is the span of the innermost Python function or method
// holding line n: from its def line to the last line indented under it.
// ok is false outside functions, or when a line between is unknown.
func pyFuncSpan(f dialect.Lines, n int, _ *any) (start, end int, name string, ok bool) {
	first, known := f.Line(n)
	if !known {
		return 0, 0, "", false
	}
	// The indentation a def must have less of to hold line n.
	limit := indentOf(first) + 1
	if strings.TrimSpace(first) == "" {
		limit = 1 << 30
	}
	for s := n; s >= 1; s-- {
		t, known := f.Line(s)
		if !known {
			return 0, 0, "", false
		}
		if strings.TrimSpace(t) == "" {
			continue
		}
		in := indentOf(t)
		if in >= limit && s != n {
			continue
		}
		if m := pyDefRE.FindStringSubmatch(t); m != nil && (s == n || in < limit) {
			e := s
			for l := s + 1; l <= f.Len(); l++ {
				tl, known := f.Line(l)
				if !known {
					break
				}
				if strings.TrimSpace(tl) == "" {
					continue
				}
				if indentOf(tl) <= in {
					break
				}
				e = l
			}
			if e >= n {
				return s, e, m[1], true
			}
		}
		if in < limit {
			limit = in
		}
		if limit == 0 && s != n {
			return 0, 0, "", false
		}
	}
	return 0, 0, "", false
}

// pyNotCalls are the names a Python test calls that are not the code under
// test: builtins and pytest's helpers.
var pyNotCalls = map[string]bool{
	"if": true, "elif": true, "while": true, "for": true, "return": true, "assert": true, "not": true, "and": true, "or": true, "in": true,
	"print": true, "len": true, "str": true, "int": true, "float": true, "bool": true, "list": true, "dict": true, "set": true,
	"tuple": true, "range": true, "sorted": true, "enumerate": true, "zip": true, "isinstance": true, "type": true, "open": true,
	"super": true, "getattr": true, "setattr": true, "hasattr": true, "min": true, "max": true, "sum": true, "abs": true, "any": true,
	"all": true, "repr": true, "raises": true, "approx": true, "fixture": true, "parametrize": true, "skip": true, "fail": true,
	"warns": true, "mark": true, "param": true,
}

// pyTripleRE finds a triple quote, with the prefixes a string may have.
var pyTripleRE = regexp.MustCompile(`(?i)(?:^|[^\w"'])(?:[rbuf]{0,2})("""|''')`)

// pyCode reports whether line n of a Python file holds code: not a line
// of a triple-quoted string (a docstring, its doctest's examples and their
// expected output are what the tests demand, not code to repair), nor
// the line that opens one alone. A line before n that no observation
// showed leaves it code.
func pyCode(f dialect.Lines, n int, _ *any) bool {
	open := "" // the triple quote of the string line n starts in
	for s := 1; s < n; s++ {
		t, known := f.Line(s)
		if !known {
			return true
		}
		open = pyTripleState(t, open)
	}
	t, known := f.Line(n)
	if !known || open != "" {
		return !known
	}
	m := pyTripleRE.FindStringSubmatchIndex(t)
	return m == nil || !pyStringPrefixOnly(t[:m[2]])
}

// pyStringPrefixOnly reports s, what precedes a triple quote on its line,
// as indentation and a string prefix alone (the line opens a string).
func pyStringPrefixOnly(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) <= 2 && strings.Trim(strings.ToLower(s), "rbuf") == ""
}

// pyTripleState is the triple quote a string is open in after line t,
// given the one it was open in before ("" for none).
func pyTripleState(t, open string) string {
	for t != "" {
		if open != "" {
			i := strings.Index(t, open)
			if i < 0 {
				return open
			}
			t, open = t[i+3:], ""
			continue
		}
		m := pyTripleRE.FindStringSubmatchIndex(t)
		if m == nil {
			return ""
		}
		if h := strings.IndexByte(t[:m[2]], '#'); h >= 0 {
			return "" // the quote is in a comment
		}
		open, t = t[m[2]:m[3]], t[m[3]:]
	}
	return open
}
