package offline

import (
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// jsDialect is JavaScript and TypeScript.
var jsDialect = dialect{
	scan: scanJS,
	skip: jsSkip,
	decl: jsDecl,
	spell: func(was string, to token.Token) string {
		// A flip keeps the strictness it found: "===" ↔ "!==".
		switch {
		case to == token.NEQ && was == "===":
			return "!=="
		case to == token.EQL && was == "!==":
			return "==="
		}
		return to.String()
	},
	bools:  [2]string{"false", "true"},
	not:    "!",
	negate: negateJSIf,
	spaced: true,
	extra:  jsTemplates,
}

// jsSkipPrefixes start the lines no template applies to: comments (and the
// lines inside a block comment), imports and exports of names, types,
// interfaces, classes' and enums' heads, decorators, directives.
var jsSkipPrefixes = []string{
	"//", "/*", "*", "#!", "import ", "import{", "export {", "export{", "export *", "} from ",
	"interface ", "export interface ", "declare ", "export declare ", "@",
	"class ", "export class ", "export default class ", "abstract class ", "export abstract class ",
	"enum ", "export enum ", "const enum ", "export const enum ", `"use `, "'use ",
}

// jsTypeAliasRE is a type alias's head.
var jsTypeAliasRE = regexp.MustCompile(`^(?:export\s+)?type\s+[\w$]+\s*(?:<[^=]*>)?\s*=`)

func jsSkip(trimmed string) bool {
	for _, p := range jsSkipPrefixes {
		if strings.HasPrefix(trimmed, p) {
			return true
		}
	}
	return jsTypeAliasRE.MatchString(trimmed)
}

// jsModifiers come before a method's name.
var jsModifiers = map[string]bool{
	"public": true, "private": true, "protected": true, "static": true, "async": true, "readonly": true,
	"override": true, "abstract": true, "get": true, "set": true, "export": true, "default": true, "declare": true,
}

// jsDecl reports a function's head, where only constants change: a
// function declaration or expression opening its body, a method
// ("[static] name(params)[: type] {"), an arrow function assigned to a name
// that opens a block ("const f = (a: number) => {", "f = async (a) => {").
func jsDecl(_ string, toks []tok) bool {
	n := len(toks)
	if n > 0 && toks[n-1].tok == token.COMMENT {
		n--
	}
	i := 0
	for i < n && jsModifiers[toks[i].lit] {
		i++
	}
	if i < n && toks[i].tok == token.FUNC {
		return true
	}
	if n == 0 || toks[n-1].tok != token.LBRACE {
		return false
	}
	for _, t := range toks[:n] {
		if t.tok == token.FUNC {
			return true // const f = function (a) {
		}
	}
	if n >= 2 && toks[n-2].lit == "=>" {
		// "=> {": an arrow function's block, assigned to a name.
		if toks[0].tok == token.CONST || toks[0].tok == token.VAR {
			return true
		}
		if i+1 < n && toks[i].tok == token.IDENT && (toks[i+1].tok == token.ASSIGN || toks[i+1].tok == token.COLON) {
			return true
		}
	}
	// A method: its name, maybe type parameters, its parameters, maybe a
	// return type, its body.
	for i < n && toks[i].tok == token.MUL {
		i++
	}
	if i+1 >= n || toks[i].tok != token.IDENT {
		return false
	}
	j := i + 1
	for j < n && toks[j].lit == "<" { // <T>, which markGenerics made jsOther
		j++
		for j < n && toks[j].tok != token.LPAREN {
			j++
		}
	}
	if j >= n || toks[j].tok != token.LPAREN {
		return false
	}
	k := matchParen(toks[:n], j)
	return k > 0 && (k == n-2 || toks[k+1].tok == token.COLON)
}

// jsTemplates are the templates of JavaScript's own forms: a length one
// short (".length" → ".length - 1"), a slice's bounds one off
// (".slice(a, b)" → ".slice(a, b - 1)", ".slice(1)" → ".slice(0)"), and
// "??" ↔ "||".
func jsTemplates(line string, toks []tok) []Mutation {
	var out []Mutation
	add := func(off, end int, repl, tpl, what string, prior float64) {
		out = append(out, Mutation{New: line[:off] + repl + line[end:], Template: tpl, What: what, Prior: prior})
	}
	next := func(i int) token.Token {
		if i+1 >= len(toks) {
			return token.ILLEGAL
		}
		return toks[i+1].tok
	}
	for i, t := range toks {
		switch {
		case t.lit == "??":
			add(t.off, t.end, "||", TplLogic, "`??` → `||`", 2)
		case t.tok == token.LOR:
			add(t.off, t.end, "??", TplLogic, "`||` → `??`", 1.5)
		case t.tok != token.IDENT || i == 0 || toks[i-1].tok != token.PERIOD:
		case t.lit == "length":
			switch next(i) {
			case token.ADD, token.SUB, token.PERIOD, token.LPAREN, token.LBRACK, token.ASSIGN, token.INC, token.DEC,
				token.ADD_ASSIGN, token.SUB_ASSIGN:
			default:
				add(t.end, t.end, " - 1", TplOffByOne, "`.length` → `.length - 1`", 2.5)
			}
		case (t.lit == "slice" || t.lit == "substring" || t.lit == "subarray") && next(i) == token.LPAREN:
			close := matchParen(toks, i+1)
			if close < 0 {
				break
			}
			// Arguments that are a name or a number alone: one more, one
			// less (a number's, as likely as an index's "- 1").
			start := i + 2
			for k := start; k <= close; k++ {
				if toks[k].tok != token.COMMA && k != close {
					continue
				}
				if k == start+1 {
					a := toks[start]
					switch n, err := strconv.Atoi(a.lit); {
					case a.tok == token.IDENT:
						for _, op := range []string{"-", "+"} {
							add(a.end, a.end, " "+op+" 1", TplOffByOne, "`."+t.lit+"` bound `"+a.lit+"` → `"+a.lit+" "+op+" 1`", 2.5)
						}
					case a.tok == token.INT && err == nil:
						for _, m := range []int{n - 1, n + 1} {
							if m >= 0 {
								add(a.off, a.end, strconv.Itoa(m), TplOffByOne, "`."+t.lit+"` bound `"+a.lit+"` → `"+strconv.Itoa(m)+"`", 3.5)
							}
						}
					}
				}
				start = k + 1
			}
		}
	}
	return out
}

// negateJSIf negates the condition of an "if (cond)" line (or "} else if
// (cond)") whose condition is not a single comparison or a negation already
// (other templates cover those).
func negateJSIf(line string, toks []tok) (Mutation, bool) {
	k := 0
	if len(toks) > 2 && toks[0].tok == token.RBRACE && toks[1].tok == token.ELSE {
		k = 2
	}
	if len(toks) < k+4 || toks[k].tok != token.IF || toks[k+1].tok != token.LPAREN {
		return Mutation{}, false
	}
	close := matchParen(toks, k+1)
	if close < 0 || close == k+2 {
		return Mutation{}, false
	}
	cond := toks[k+2 : close]
	simple := true
	cmps, logic := 0, 0
	for _, t := range cond {
		switch t.tok {
		case token.ASSIGN, token.ADD_ASSIGN, token.SUB_ASSIGN, token.COMMENT, token.SEMICOLON:
			return Mutation{}, false
		case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
			cmps++
			simple = false
		case token.LAND, token.LOR:
			logic++
			simple = false
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.AND, token.OR, token.XOR, jsOther, jsKeyword:
			simple = false
		}
	}
	if cond[0].tok == token.NOT || (cmps == 1 && logic == 0) {
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
