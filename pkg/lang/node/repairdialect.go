package node

import (
	"go/token"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// RepairDialect is JavaScript and TypeScript as the offline policy's
// repair templates read them (the capability pkg/harness/offline asks
// for): their files by extension, the *.test.* and *.spec.* ones and those
// under a __tests__, __mocks__, tests or test directory tests, declaration
// files and installed packages no code; a line tokenized by the lexer of
// repairlex.go; the named functions of repairfuncs.go; a failing test read
// from its file by its title, its stack and its message (repairfailure.go).
func (Driver) RepairDialect() *dialect.Dialect { return &jsDialect }

var jsDialect = dialect.Dialect{
	Name:     "node",
	Owns:     isJS,
	IsTest:   isJSTestPath,
	Ignored:  func(p string) bool { return strings.Contains(path.Base(p), ".d.") || hasDir(p, "node_modules") },
	Scan:     scanJS,
	Skip:     jsSkip,
	Decl:     jsDecl,
	Bools:    [2]string{"false", "true"},
	Not:      "!",
	Negate:   negateJSIf,
	Spaced:   true,
	Extra:    jsTemplates,
	Code:     jsCode,
	FuncSpan: jsFuncSpan,
	Funcs:    jsFuncMap,
	Declares: regexp.MustCompile(`^\s*(?:class\s+|(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*)([A-Za-z_$][\w$]*)`),
	NotCall:  jsNotCall,
	Title:    jsTitle,
	TestLine: jsTestLine,
	TestCall: jsTestCall,
	Tests:    jsTests,
	Stack:    jsStack,
	Got:      jsGot,
	Spell: func(was string, to token.Token) string {
		// A flip keeps the strictness it found: "===" ↔ "!==".
		switch {
		case to == token.NEQ && was == "===":
			return "!=="
		case to == token.EQL && was == "!==":
			return "==="
		}
		return to.String()
	},
}

// jsExts are the extensions of JavaScript's and TypeScript's files.
var jsExts = []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}

// isJS reports a JavaScript or TypeScript file, by its extension.
func isJS(p string) bool {
	for _, ext := range jsExts {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}

// isJSTestPath reports a file of tests as the repair templates leave it:
// *.test.* and *.spec.* files, and those under a __tests__, __mocks__,
// tests or test directory.
func isJSTestPath(p string) bool {
	if !isJS(p) {
		return false
	}
	base := path.Base(p)
	if strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") {
		return true
	}
	return hasDir(p, "__tests__", "__mocks__", "tests", "test")
}

// hasDir reports whether one of the directories p is under is named one of
// names.
func hasDir(p string, names ...string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		for _, n := range names {
			if seg == n {
				return true
			}
		}
	}
	return false
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
func jsDecl(_ string, toks []dialect.Tok) bool {
	n := len(toks)
	if n > 0 && toks[n-1].Tok == token.COMMENT {
		n--
	}
	i := 0
	for i < n && jsModifiers[toks[i].Lit] {
		i++
	}
	if i < n && toks[i].Tok == token.FUNC {
		return true
	}
	if n == 0 || toks[n-1].Tok != token.LBRACE {
		return false
	}
	for _, t := range toks[:n] {
		if t.Tok == token.FUNC {
			return true // const f = function (a) {
		}
	}
	if n >= 2 && toks[n-2].Lit == "=>" {
		// "=> {": an arrow function's block, assigned to a name.
		if toks[0].Tok == token.CONST || toks[0].Tok == token.VAR {
			return true
		}
		if i+1 < n && toks[i].Tok == token.IDENT && (toks[i+1].Tok == token.ASSIGN || toks[i+1].Tok == token.COLON) {
			return true
		}
	}
	// A method: its name, maybe type parameters, its parameters, maybe a
	// return type, its body.
	for i < n && toks[i].Tok == token.MUL {
		i++
	}
	if i+1 >= n || toks[i].Tok != token.IDENT {
		return false
	}
	j := i + 1
	for j < n && toks[j].Lit == "<" { // <T>, which markGenerics made jsOther
		j++
		for j < n && toks[j].Tok != token.LPAREN {
			j++
		}
	}
	if j >= n || toks[j].Tok != token.LPAREN {
		return false
	}
	k := dialect.MatchParen(toks[:n], j)
	return k > 0 && (k == n-2 || toks[k+1].Tok == token.COLON)
}

// jsTemplates are the templates of JavaScript's own forms: a length one
// short (".length" → ".length - 1"), a slice's bounds one off
// (".slice(a, b)" → ".slice(a, b - 1)", ".slice(1)" → ".slice(0)"), and
// "??" ↔ "||".
func jsTemplates(line string, toks []dialect.Tok) []dialect.Mutation {
	var out []dialect.Mutation
	add := func(off, end int, repl, tpl, what string, prior float64) {
		out = append(out, dialect.Mutation{New: line[:off] + repl + line[end:], Template: tpl, What: what, Prior: prior})
	}
	next := func(i int) token.Token {
		if i+1 >= len(toks) {
			return token.ILLEGAL
		}
		return toks[i+1].Tok
	}
	for i, t := range toks {
		switch {
		case t.Lit == "??":
			add(t.Off, t.End, "||", dialect.TplLogic, "`??` → `||`", 2)
		case t.Tok == token.LOR:
			add(t.Off, t.End, "??", dialect.TplLogic, "`||` → `??`", 1.5)
		case t.Tok != token.IDENT || i == 0 || toks[i-1].Tok != token.PERIOD:
		case t.Lit == "length":
			switch next(i) {
			case token.ADD, token.SUB, token.PERIOD, token.LPAREN, token.LBRACK, token.ASSIGN, token.INC, token.DEC,
				token.ADD_ASSIGN, token.SUB_ASSIGN:
			default:
				add(t.End, t.End, " - 1", dialect.TplOffByOne, "`.length` → `.length - 1`", 2.5)
			}
		case (t.Lit == "slice" || t.Lit == "substring" || t.Lit == "subarray") && next(i) == token.LPAREN:
			close := dialect.MatchParen(toks, i+1)
			if close < 0 {
				break
			}
			// Arguments that are a name or a number alone: one more, one
			// less (a number's, as likely as an index's "- 1").
			start := i + 2
			for k := start; k <= close; k++ {
				if toks[k].Tok != token.COMMA && k != close {
					continue
				}
				if k == start+1 {
					a := toks[start]
					switch n, err := strconv.Atoi(a.Lit); {
					case a.Tok == token.IDENT:
						for _, op := range []string{"-", "+"} {
							add(a.End, a.End, " "+op+" 1", dialect.TplOffByOne, "`."+t.Lit+"` bound `"+a.Lit+"` → `"+a.Lit+" "+op+" 1`", 2.5)
						}
					case a.Tok == token.INT && err == nil:
						for _, m := range []int{n - 1, n + 1} {
							if m >= 0 {
								add(a.Off, a.End, strconv.Itoa(m), dialect.TplOffByOne, "`."+t.Lit+"` bound `"+a.Lit+"` → `"+strconv.Itoa(m)+"`", 3.5)
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
func negateJSIf(line string, toks []dialect.Tok) (dialect.Mutation, bool) {
	k := 0
	if len(toks) > 2 && toks[0].Tok == token.RBRACE && toks[1].Tok == token.ELSE {
		k = 2
	}
	if len(toks) < k+4 || toks[k].Tok != token.IF || toks[k+1].Tok != token.LPAREN {
		return dialect.Mutation{}, false
	}
	close := dialect.MatchParen(toks, k+1)
	if close < 0 || close == k+2 {
		return dialect.Mutation{}, false
	}
	cond := toks[k+2 : close]
	simple := true
	cmps, logic := 0, 0
	for _, t := range cond {
		switch t.Tok {
		case token.ASSIGN, token.ADD_ASSIGN, token.SUB_ASSIGN, token.COMMENT, token.SEMICOLON:
			return dialect.Mutation{}, false
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
	if cond[0].Tok == token.NOT || (cmps == 1 && logic == 0) {
		return dialect.Mutation{}, false
	}
	return dialect.Negated(line, cond, "!", simple), true
}
