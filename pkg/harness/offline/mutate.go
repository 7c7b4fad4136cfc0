package offline

import (
	"go/scanner"
	"go/token"
	"strconv"
	"strings"
)

// Mutation is one repair template applied to one line.
type Mutation struct {
	New      string  // the line after the change
	Template string  // the template's name
	What     string  // what it does, for people: "`<=` → `<`"
	Prior    float64 // how likely the template is to be the fix
}

// Template names.
const (
	TplBoundary   = "comparison-boundary"  // < ↔ <=, > ↔ >=
	TplEquality   = "comparison-equality"  // == ↔ !=
	TplDirection  = "comparison-direction" // < ↔ >, <= ↔ >=
	TplNegateCmp  = "comparison-negate"    // < ↔ >=, > ↔ <=
	TplArithSign  = "arithmetic-sign"      // + ↔ -, += ↔ -=, ++ ↔ --
	TplArithScale = "arithmetic-scale"     // * ↔ /
	TplOffByOne   = "off-by-one-index"     // len(x)-1 ↔ len(x), s[i] ↔ s[i±1]
	TplConstant   = "off-by-one-constant"  // n ↔ n±1
	TplLogic      = "boolean-operator"     // && ↔ ||
	TplNot        = "boolean-not"          // remove a !
	TplNegate     = "boolean-negate"       // if c → if !c
	TplBoolConst  = "boolean-constant"     // true ↔ false
	TplSwapArgs   = "swapped-arguments"    // f(a, b) → f(b, a)
	TplUndoHunk   = "undo-blame-hunk"
	TplUndoFile   = "undo-blame-file"
)

// dialect is what the templates need of a language: its tokens (as
// go/token's kinds, which name the operators both languages share), how it
// spells them, and the lines and forms that are its own.
type dialect struct {
	// scan tokenizes one line; ok is false when it does not scan cleanly
	// (inside a multi-line string, say).
	scan func(line string) ([]tok, bool)
	// skip reports a line (trimmed) no template applies to: comments,
	// imports, type declarations.
	skip func(trimmed string) bool
	// decl reports a declaration's line, where only constants change.
	decl func(line string, toks []tok) bool
	// spell is how the language writes the operator to, which replaces
	// the operator written was.
	spell func(was string, to token.Token) string
	// bools are the language's false and true; not its negation.
	bools [2]string
	not   string
	// negate negates a condition the line tests.
	negate func(line string, toks []tok) (Mutation, bool)
	// lenBuiltin: len(x) is the length of x (Go, Python).
	lenBuiltin bool
	// spaced: the language's style writes an index's one-off as "i - 1",
	// not "i-1".
	spaced bool
	// extra are the templates of the language's own forms, on a line
	// that is not a declaration.
	extra func(line string, toks []tok) []Mutation
}

// goDialect is Go, tokenized by go/scanner.
var goDialect = dialect{
	scan: scanLine,
	skip: func(trimmed string) bool {
		return strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "import") ||
			strings.HasPrefix(trimmed, "package ") || strings.HasPrefix(trimmed, "type ")
	},
	decl: func(line string, toks []tok) bool {
		return toks[0].tok == token.FUNC || toks[0].tok == token.VAR && !strings.Contains(line, "=")
	},
	spell:      func(_ string, t token.Token) string { return t.String() },
	bools:      [2]string{"false", "true"},
	not:        "!",
	negate:     negateIf,
	lenBuiltin: true,
}

type tok struct {
	off, end int
	tok      token.Token
	lit      string
}

// scanLine tokenizes one line of Go; ok is false when it does not scan
// cleanly (inside a raw string, say).
func scanLine(line string) ([]tok, bool) {
	src := []byte(line)
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	bad := false
	s.Init(file, src, func(token.Position, string) { bad = true }, scanner.ScanComments)
	var toks []tok
	for {
		pos, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		if t == token.SEMICOLON && lit == "\n" {
			continue
		}
		off := file.Offset(pos)
		n := len(lit)
		if t.IsOperator() || t.IsKeyword() {
			n = len(t.String())
		}
		if t == token.SEMICOLON && lit == "" {
			n = 1
		}
		toks = append(toks, tok{off: off, end: off + n, tok: t, lit: lit})
	}
	return toks, !bad
}

// endsOperand reports whether a token can end an operand, so that an
// operator after it is binary.
func endsOperand(t token.Token) bool {
	switch t {
	case token.IDENT, token.INT, token.FLOAT, token.IMAG, token.CHAR, token.STRING,
		token.RPAREN, token.RBRACK, token.RBRACE:
		return true
	}
	return false
}

var swaps = map[token.Token][]struct {
	to    token.Token
	tpl   string
	prior float64
}{
	token.LSS:        {{token.LEQ, TplBoundary, 4}, {token.GEQ, TplNegateCmp, 1.5}, {token.GTR, TplDirection, 1.5}},
	token.LEQ:        {{token.LSS, TplBoundary, 4}, {token.GTR, TplNegateCmp, 1.5}, {token.GEQ, TplDirection, 1.5}},
	token.GTR:        {{token.GEQ, TplBoundary, 4}, {token.LEQ, TplNegateCmp, 1.5}, {token.LSS, TplDirection, 1.5}},
	token.GEQ:        {{token.GTR, TplBoundary, 4}, {token.LSS, TplNegateCmp, 1.5}, {token.LEQ, TplDirection, 1.5}},
	token.EQL:        {{token.NEQ, TplEquality, 2.5}},
	token.NEQ:        {{token.EQL, TplEquality, 2.5}},
	token.LAND:       {{token.LOR, TplLogic, 3}},
	token.LOR:        {{token.LAND, TplLogic, 3}},
	token.ADD_ASSIGN: {{token.SUB_ASSIGN, TplArithSign, 3}},
	token.SUB_ASSIGN: {{token.ADD_ASSIGN, TplArithSign, 3}},
	token.INC:        {{token.DEC, TplArithSign, 3}},
	token.DEC:        {{token.INC, TplArithSign, 3}},
	token.MUL_ASSIGN: {{token.QUO_ASSIGN, TplArithScale, 1.5}},
	token.QUO_ASSIGN: {{token.MUL_ASSIGN, TplArithScale, 1.5}},
}

// Mutations applies every repair template to one line of Go source, most
// likely first. Lines that are declarations, comments or imports get none.
func Mutations(line string) []Mutation { return mutations(goDialect, line) }

// MutationsIn applies the repair templates to one line of the file at path,
// with the tokens of the file's language (Go or Python, by its extension);
// a file of another language gets none.
func MutationsIn(path, line string) []Mutation {
	d, ok := dialectOf(path)
	if !ok {
		return nil
	}
	return mutations(d, line)
}

func mutations(d dialect, line string) []Mutation {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || d.skip(trimmed) {
		return nil
	}
	toks, ok := d.scan(line)
	if !ok || len(toks) == 0 {
		return nil
	}
	m := &mutator{d: d, line: line, trimmed: trimmed, toks: toks}
	decl := d.decl(line, toks)
	for i, t := range toks {
		if decl && t.tok != token.INT {
			continue
		}
		m.token(i, t)
	}
	if d.extra != nil && !decl {
		m.out = append(m.out, d.extra(line, toks)...)
	}
	if !decl {
		m.out = append(m.out, swapArgs(line, toks)...)
	}
	if n, ok := d.negate(line, toks); ok {
		m.out = append(m.out, n)
	}
	return m.out
}

// mutator makes the single-token mutations of one line of a dialect,
// token by token.
type mutator struct {
	d             dialect
	line, trimmed string
	toks          []tok
	out           []Mutation
}

// add is the mutation that replaces the line's bytes off..end with repl.
func (m *mutator) add(off, end int, repl, tpl, what string, prior float64) {
	m.out = append(m.out, Mutation{New: m.line[:off] + repl + m.line[end:], Template: tpl, What: what, Prior: prior})
}

// in names where a change is when the line has more than one place it
// could be: "in `n%2 == 1`".
func (m *mutator) in(i int) string {
	lo, hi := m.toks[i].off, m.toks[i].end
	if i > 0 {
		lo = m.toks[i-1].off
	}
	if i+1 < len(m.toks) {
		hi = m.toks[i+1].end
	}
	return " in `" + m.line[lo:hi] + "`"
}

func (m *mutator) prev(i int) token.Token {
	if i == 0 {
		return token.ILLEGAL
	}
	return m.toks[i-1].tok
}

func (m *mutator) next(i int) tok {
	if i+1 >= len(m.toks) {
		return tok{tok: token.ILLEGAL}
	}
	return m.toks[i+1]
}

// token adds the mutations of the i-th token t: its swaps, and those of
// its kind.
func (m *mutator) token(i int, t tok) {
	was := m.line[t.off:t.end]
	for _, s := range swaps[t.tok] {
		to := m.d.spell(was, s.to)
		m.add(t.off, t.end, to, s.tpl, "`"+was+"` → `"+to+"`"+m.in(i), s.prior)
	}
	switch t.tok {
	case token.ADD, token.SUB:
		m.arithSign(i, t)
	case token.MUL, token.QUO:
		m.arithScale(i, t, was)
	case token.NOT:
		// Go's "!x" loses its "!"; Python's "not x" (and "x not in y",
		// "x is not y") its "not ".
		end := t.end
		if m.d.not != "!" && i+1 < len(m.toks) {
			end = m.toks[i+1].off
		}
		m.add(t.off, end, "", TplNot, "remove `"+m.d.not+"`", 3)
	case token.INT:
		n, err := strconv.Atoi(t.lit)
		if err != nil || m.prev(i) == token.PERIOD {
			break
		}
		m.add(t.off, t.end, strconv.Itoa(n+1), TplConstant, "`"+t.lit+"` → `"+strconv.Itoa(n+1)+"`"+m.in(i), 2)
		if n > 0 {
			m.add(t.off, t.end, strconv.Itoa(n-1), TplConstant, "`"+t.lit+"` → `"+strconv.Itoa(n-1)+"`"+m.in(i), 2)
		}
	case token.IDENT:
		m.ident(i, t)
	}
}

// arithSign flips a binary + or -, and drops a "+ 1" or "- 1".
func (m *mutator) arithSign(i int, t tok) {
	if !endsOperand(m.prev(i)) || m.prev(i) == token.STRING || m.next(i).tok == token.STRING {
		return
	}
	to := token.SUB
	if t.tok == token.SUB {
		to = token.ADD
	}
	m.add(t.off, t.end, to.String(), TplArithSign, "`"+t.tok.String()+"` → `"+to.String()+"`"+m.in(i), 3)
	if n := m.next(i); n.tok == token.INT && n.lit == "1" {
		after := m.next(i + 1).tok
		if after != token.MUL && after != token.QUO && after != token.PERIOD {
			m.add(m.toks[i-1].end, n.end, "", TplOffByOne, "drop `"+t.tok.String()+" 1`", 3.5)
		}
	}
}

// arithScale turns a binary * into / and back.
func (m *mutator) arithScale(i int, t tok, was string) {
	if !endsOperand(m.prev(i)) || strings.HasPrefix(m.trimmed, "var ") {
		return
	}
	if n := m.next(i); t.tok == token.MUL && n.tok == token.IDENT && i >= 2 && m.toks[i-2].tok == token.LPAREN {
		return // a pointer parameter type: (x *T)
	}
	to := token.QUO
	if t.tok == token.QUO {
		to = token.MUL
	}
	m.add(t.off, t.end, to.String(), TplArithScale, "`"+was+"` → `"+to.String()+"`"+m.in(i), 1.5)
}

// ident flips a boolean constant, shortens a length by one, and moves an
// index or a slice bound by one.
func (m *mutator) ident(i int, t tok) {
	d := m.d
	switch {
	case t.lit == d.bools[0] || t.lit == d.bools[1]:
		to := d.bools[0]
		if t.lit == d.bools[0] {
			to = d.bools[1]
		}
		m.add(t.off, t.end, to, TplBoolConst, "`"+t.lit+"` → `"+to+"`", 1.5)
	case d.lenBuiltin && t.lit == "len" && m.next(i).tok == token.LPAREN:
		if j := matchParen(m.toks, i+1); j > 0 {
			if a := m.next(j).tok; a != token.ADD && a != token.SUB {
				m.add(m.toks[j].end, m.toks[j].end, "-1", TplOffByOne, "`len(…)` → `len(…)-1`", 2.5)
			}
		}
	case (m.prev(i) == token.LBRACK || m.prev(i) == token.COLON) && (m.next(i).tok == token.RBRACK || m.next(i).tok == token.COLON) && inBrackets(m.toks, i):
		for _, op := range []string{"-", "+"} {
			one := op + "1"
			if d.spaced {
				one = " " + op + " 1"
			}
			m.add(t.end, t.end, one, TplOffByOne, "index `"+t.lit+"` → `"+t.lit+one+"`", 2.5)
		}
	}
}

// matchParen returns the index of the token closing the parenthesis at i.
func matchParen(toks []tok, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].tok {
		case token.LPAREN:
			depth++
		case token.RPAREN:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// inBrackets reports whether token i sits directly inside an index or slice
// expression x[…] (not a type like []T or map[K]V).
func inBrackets(toks []tok, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch toks[j].tok {
		case token.LBRACK:
			return j > 0 && endsOperand(toks[j-1].tok) && toks[j-1].lit != "map"
		case token.RBRACK:
			return false
		}
	}
	return false
}

// negateIf negates the condition of an "if cond {" line whose condition is
// not already a single comparison (the comparison templates cover those) or
// a negation (TplNot covers it).
func negateIf(line string, toks []tok) (Mutation, bool) {
	first := 0
	if len(toks) > 2 && toks[0].tok == token.RBRACE && toks[1].tok == token.ELSE {
		first = 2
	}
	if len(toks) < first+3 || toks[first].tok != token.IF || toks[len(toks)-1].tok != token.LBRACE {
		return Mutation{}, false
	}
	cond := toks[first+1 : len(toks)-1]
	simple := true
	cmps := 0
	for _, t := range cond {
		switch t.tok {
		case token.SEMICOLON, token.DEFINE, token.ASSIGN, token.COMMENT:
			return Mutation{}, false
		case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
			cmps++
			simple = false
		case token.LAND, token.LOR, token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.AND, token.OR, token.XOR:
			simple = false
		}
	}
	if cond[0].tok == token.NOT || (cmps == 1 && !strings.Contains(line, "&&") && !strings.Contains(line, "||")) {
		return Mutation{}, false
	}
	start, end := cond[0].off, cond[len(cond)-1].end
	c := line[start:end]
	repl := "!(" + c + ")"
	if simple {
		repl = "!" + c
	}
	return Mutation{New: line[:start] + repl + line[end:], Template: TplNegate, What: "negate the condition `" + c + "`", Prior: 2}, true
}

// swapArgs swaps the two arguments of each call on the line whose
// arguments are single names or literals: `f(total, done)` → `f(done,
// total)`.
func swapArgs(line string, toks []tok) []Mutation {
	var out []Mutation
	simple := func(t tok) bool {
		switch t.tok {
		case token.IDENT, token.INT, token.FLOAT, token.STRING, token.CHAR:
			return true
		}
		return false
	}
	for i := 1; i+4 < len(toks); i++ {
		if toks[i].tok != token.LPAREN || toks[i-1].tok != token.IDENT {
			continue
		}
		a, comma, b, end := toks[i+1], toks[i+2], toks[i+3], toks[i+4]
		if comma.tok != token.COMMA || end.tok != token.RPAREN || !simple(a) || !simple(b) {
			continue
		}
		x, y := line[a.off:a.end], line[b.off:b.end]
		if x == y {
			continue
		}
		call := line[toks[i-1].off:toks[i-1].end]
		out = append(out, Mutation{New: line[:a.off] + y + line[a.end:b.off] + x + line[b.end:], Template: TplSwapArgs,
			What: "swap the arguments of `" + call + "(" + x + ", " + y + ")`", Prior: 2})
	}
	return out
}
