package offline

import (
	"go/token"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// Mutation is one repair template applied to one line.
type Mutation = dialect.Mutation

type tok = dialect.Tok

// Template names.
const (
	TplBoundary   = dialect.TplBoundary
	TplEquality   = dialect.TplEquality
	TplDirection  = dialect.TplDirection
	TplNegateCmp  = dialect.TplNegateCmp
	TplArithSign  = dialect.TplArithSign
	TplArithScale = dialect.TplArithScale
	TplOffByOne   = dialect.TplOffByOne
	TplConstant   = dialect.TplConstant
	TplLogic      = dialect.TplLogic
	TplNot        = dialect.TplNot
	TplNegate     = dialect.TplNegate
	TplBoolConst  = dialect.TplBoolConst
	TplSwapArgs   = dialect.TplSwapArgs
	TplUndoHunk   = dialect.TplUndoHunk
	TplUndoFile   = dialect.TplUndoFile
)

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

// Mutations applies every repair template to one line of the file at path,
// most likely first, with the dialect of the file's language (the driver
// that claims the file). Lines that are declarations, comments or imports
// get none, and so does a file no driver claims.
func (p *Policy) Mutations(path, line string) []Mutation {
	d := p.langs.of(path)
	if d == nil {
		return nil
	}
	return mutations(d, line)
}

func mutations(d *dialect.Dialect, line string) []Mutation {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || d.Skip(trimmed) {
		return nil
	}
	toks, ok := d.Scan(line)
	if !ok || len(toks) == 0 {
		return nil
	}
	m := &mutator{d: d, line: line, trimmed: trimmed, toks: toks}
	decl := d.Decl(line, toks)
	for i, t := range toks {
		if decl && t.Tok != token.INT {
			continue
		}
		m.token(i, t)
	}
	if d.Extra != nil && !decl {
		m.out = append(m.out, d.Extra(line, toks)...)
	}
	if !decl {
		m.out = append(m.out, swapArgs(line, toks)...)
	}
	if n, ok := d.Negate(line, toks); ok {
		m.out = append(m.out, n)
	}
	return m.out
}

// mutator makes the single-token mutations of one line of a dialect,
// token by token.
type mutator struct {
	d             *dialect.Dialect
	line, trimmed string
	toks          []tok
	out           []Mutation
}

// add is the mutation that replaces the line's bytes off..End with repl.
func (m *mutator) add(off, end int, repl, tpl, what string, prior float64) {
	m.out = append(m.out, Mutation{New: m.line[:off] + repl + m.line[end:], Template: tpl, What: what, Prior: prior})
}

// in names where a change is when the line has more than one place it
// could be: "in `n%2 == 1`".
func (m *mutator) in(i int) string {
	lo, hi := m.toks[i].Off, m.toks[i].End
	if i > 0 {
		lo = m.toks[i-1].Off
	}
	if i+1 < len(m.toks) {
		hi = m.toks[i+1].End
	}
	return " in `" + m.line[lo:hi] + "`"
}

func (m *mutator) prev(i int) token.Token {
	if i == 0 {
		return token.ILLEGAL
	}
	return m.toks[i-1].Tok
}

func (m *mutator) next(i int) tok {
	if i+1 >= len(m.toks) {
		return tok{Tok: token.ILLEGAL}
	}
	return m.toks[i+1]
}

// token adds the mutations of the i-th token t: its swaps, and those of
// its kind.
func (m *mutator) token(i int, t tok) {
	was := m.line[t.Off:t.End]
	for _, s := range swaps[t.Tok] {
		to := m.d.Spell(was, s.to)
		m.add(t.Off, t.End, to, s.tpl, "`"+was+"` → `"+to+"`"+m.in(i), s.prior)
	}
	switch t.Tok {
	case token.ADD, token.SUB:
		m.arithSign(i, t)
	case token.MUL, token.QUO:
		m.arithScale(i, t, was)
	case token.NOT:
		// "!x" loses its "!"; a negation spelled as a word ("not x",
		// "x not in y", "x is not y") loses the word and the blanks
		// after it.
		end := t.End
		if m.d.Not != "!" && i+1 < len(m.toks) {
			end = m.toks[i+1].Off
		}
		m.add(t.Off, end, "", TplNot, "remove `"+m.d.Not+"`", 3)
	case token.INT:
		n, err := strconv.Atoi(t.Lit)
		if err != nil || m.prev(i) == token.PERIOD {
			break
		}
		m.add(t.Off, t.End, strconv.Itoa(n+1), TplConstant, "`"+t.Lit+"` → `"+strconv.Itoa(n+1)+"`"+m.in(i), 2)
		if n > 0 {
			m.add(t.Off, t.End, strconv.Itoa(n-1), TplConstant, "`"+t.Lit+"` → `"+strconv.Itoa(n-1)+"`"+m.in(i), 2)
		}
	case token.IDENT:
		m.ident(i, t)
	}
}

// arithSign flips a binary + or -, and drops a "+ 1" or "- 1".
func (m *mutator) arithSign(i int, t tok) {
	if !dialect.EndsOperand(m.prev(i)) || m.prev(i) == token.STRING || m.next(i).Tok == token.STRING {
		return
	}
	to := token.SUB
	if t.Tok == token.SUB {
		to = token.ADD
	}
	m.add(t.Off, t.End, to.String(), TplArithSign, "`"+t.Tok.String()+"` → `"+to.String()+"`"+m.in(i), 3)
	if n := m.next(i); n.Tok == token.INT && n.Lit == "1" {
		after := m.next(i + 1).Tok
		if after != token.MUL && after != token.QUO && after != token.PERIOD {
			m.add(m.toks[i-1].End, n.End, "", TplOffByOne, "drop `"+t.Tok.String()+" 1`", 3.5)
		}
	}
}

// arithScale turns a binary * into / and back.
func (m *mutator) arithScale(i int, t tok, was string) {
	if !dialect.EndsOperand(m.prev(i)) || strings.HasPrefix(m.trimmed, "var ") {
		return
	}
	if n := m.next(i); t.Tok == token.MUL && n.Tok == token.IDENT && i >= 2 && m.toks[i-2].Tok == token.LPAREN {
		return // a pointer parameter type: (x *T)
	}
	to := token.QUO
	if t.Tok == token.QUO {
		to = token.MUL
	}
	m.add(t.Off, t.End, to.String(), TplArithScale, "`"+was+"` → `"+to.String()+"`"+m.in(i), 1.5)
}

// ident flips a boolean constant, shortens a length by one, and moves an
// index or a slice bound by one.
func (m *mutator) ident(i int, t tok) {
	d := m.d
	switch {
	case t.Lit == d.Bools[0] || t.Lit == d.Bools[1]:
		to := d.Bools[0]
		if t.Lit == d.Bools[0] {
			to = d.Bools[1]
		}
		m.add(t.Off, t.End, to, TplBoolConst, "`"+t.Lit+"` → `"+to+"`", 1.5)
	case d.LenBuiltin && t.Lit == "len" && m.next(i).Tok == token.LPAREN:
		if j := dialect.MatchParen(m.toks, i+1); j > 0 {
			if a := m.next(j).Tok; a != token.ADD && a != token.SUB {
				m.add(m.toks[j].End, m.toks[j].End, "-1", TplOffByOne, "`len(…)` → `len(…)-1`", 2.5)
			}
		}
	case (m.prev(i) == token.LBRACK || m.prev(i) == token.COLON) && (m.next(i).Tok == token.RBRACK || m.next(i).Tok == token.COLON) && inBrackets(m.toks, i):
		for _, op := range []string{"-", "+"} {
			one := op + "1"
			if d.Spaced {
				one = " " + op + " 1"
			}
			m.add(t.End, t.End, one, TplOffByOne, "index `"+t.Lit+"` → `"+t.Lit+one+"`", 2.5)
		}
	}
}

// inBrackets reports whether token i sits directly inside an index or slice
// expression x[…] (not a type like []T or map[K]V).
func inBrackets(toks []tok, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch toks[j].Tok {
		case token.LBRACK:
			return j > 0 && dialect.EndsOperand(toks[j-1].Tok) && toks[j-1].Lit != "map"
		case token.RBRACK:
			return false
		}
	}
	return false
}

// swapArgs swaps the two arguments of each call on the line whose
// arguments are single names or literals: `f(total, done)` → `f(done,
// total)`.
func swapArgs(line string, toks []tok) []Mutation {
	var out []Mutation
	simple := func(t tok) bool {
		switch t.Tok {
		case token.IDENT, token.INT, token.FLOAT, token.STRING, token.CHAR:
			return true
		}
		return false
	}
	for i := 1; i+4 < len(toks); i++ {
		if toks[i].Tok != token.LPAREN || toks[i-1].Tok != token.IDENT {
			continue
		}
		a, comma, b, end := toks[i+1], toks[i+2], toks[i+3], toks[i+4]
		if comma.Tok != token.COMMA || end.Tok != token.RPAREN || !simple(a) || !simple(b) {
			continue
		}
		x, y := line[a.Off:a.End], line[b.Off:b.End]
		if x == y {
			continue
		}
		call := line[toks[i-1].Off:toks[i-1].End]
		out = append(out, Mutation{New: line[:a.Off] + y + line[a.End:b.Off] + x + line[b.End:], Template: TplSwapArgs,
			What: "swap the arguments of `" + call + "(" + x + ", " + y + ")`", Prior: 2})
	}
	return out
}
