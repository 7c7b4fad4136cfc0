package node

import (
	"go/token"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// JavaScript's and TypeScript's tokens, for the repair templates: a lexer of
// one line, as the Python driver's is for Python, giving go/token's kinds to the
// operators Go shares (an operator's text is its lit). "===" is EQL and "!==" NEQ as "==" and "!=" are (the
// dialect spells a flip in the strictness it found); "?." is a PERIOD;
// "if" is IF, "function" FUNC. Strings in quotes, template literals closed
// on the line (their substitutions inside them) and regular expression
// literals (where a "/" cannot be a division) are single tokens; "//" and
// "/* */" comments too. A line that opens a string, a template literal or a
// comment it does not close, or that holds JSX or a type assertion ("<" where
// no operand comes before it), does not scan. TypeScript's generic brackets
// ("Map<string, number>") are told from comparisons and left alone, and so is
// its non-null "x!".

// jsKeyword is the kind of the keywords no template changes and after which
// an operator is unary ("return -1", "typeof -x"); jsOther that of the
// operators no template changes ("??", "=>", "**", "?", "...").
const (
	jsKeyword = token.DEFAULT
	jsOther   = token.ELLIPSIS
)

var jsKeywords = map[string]token.Token{
	"if": token.IF, "else": token.ELSE, "function": token.FUNC, "return": token.RETURN, "for": token.FOR,
	"import": token.IMPORT, "const": token.CONST, "var": token.VAR, "let": token.VAR,
	"case": jsKeyword, "delete": jsKeyword, "do": jsKeyword, "in": jsKeyword, "instanceof": jsKeyword,
	"new": jsKeyword, "of": jsKeyword, "throw": jsKeyword, "typeof": jsKeyword, "void": jsKeyword,
	"yield": jsKeyword, "await": jsKeyword, "while": jsKeyword, "switch": jsKeyword, "try": jsKeyword,
	"catch": jsKeyword, "finally": jsKeyword, "export": jsKeyword, "default": jsKeyword, "extends": jsKeyword,
	"keyof": jsKeyword,
}

// jsOps are JavaScript's and TypeScript's operators and punctuators, longest
// first.
var jsOps = []struct {
	text string
	tok  token.Token
}{
	{">>>=", jsOther},
	{"===", token.EQL}, {"!==", token.NEQ}, {"**=", jsOther}, {"...", jsOther}, {">>>", jsOther},
	{"<<=", token.SHL_ASSIGN}, {">>=", token.SHR_ASSIGN}, {"&&=", jsOther}, {"||=", jsOther}, {"??=", jsOther},
	{"=>", jsOther}, {"==", token.EQL}, {"!=", token.NEQ}, {"<=", token.LEQ}, {">=", token.GEQ},
	{"&&", token.LAND}, {"||", token.LOR}, {"??", jsOther}, {"?.", token.PERIOD},
	{"++", token.INC}, {"--", token.DEC}, {"+=", token.ADD_ASSIGN}, {"-=", token.SUB_ASSIGN},
	{"*=", token.MUL_ASSIGN}, {"/=", token.QUO_ASSIGN}, {"%=", token.REM_ASSIGN}, {"&=", token.AND_ASSIGN},
	{"|=", token.OR_ASSIGN}, {"^=", token.XOR_ASSIGN}, {"**", jsOther}, {"<<", token.SHL}, {">>", token.SHR},
	{"+", token.ADD}, {"-", token.SUB}, {"*", token.MUL}, {"/", token.QUO}, {"%", token.REM},
	{"<", token.LSS}, {">", token.GTR}, {"=", token.ASSIGN}, {"&", token.AND}, {"|", token.OR}, {"^", token.XOR},
	{"!", token.NOT}, {"~", jsOther}, {"?", jsOther}, {"@", jsOther}, {"(", token.LPAREN}, {")", token.RPAREN},
	{"[", token.LBRACK}, {"]", token.RBRACK}, {"{", token.LBRACE}, {"}", token.RBRACE}, {",", token.COMMA},
	{":", token.COLON}, {".", token.PERIOD}, {";", token.SEMICOLON},
}

// scanJS tokenizes one line of JavaScript or TypeScript.
func scanJS(line string) ([]dialect.Tok, bool) {
	var toks []dialect.Tok
	prev := func() token.Token { // comments aside
		for k := len(toks) - 1; k >= 0; k-- {
			if toks[k].Tok != token.COMMENT {
				return toks[k].Tok
			}
		}
		return token.ILLEGAL
	}
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case strings.HasPrefix(line[i:], "//"):
			toks = append(toks, dialect.Tok{Off: i, End: len(line), Tok: token.COMMENT, Lit: line[i:]})
			return toks, true
		case strings.HasPrefix(line[i:], "/*"):
			end := strings.Index(line[i+2:], "*/")
			if end < 0 {
				return toks, false // a comment that goes on past the line
			}
			end += i + 4
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: token.COMMENT, Lit: line[i:end]})
			i = end
			continue
		case c == '\'' || c == '"' || c == '`':
			end := jsStringEnd(line, i)
			if end < 0 {
				return toks, false
			}
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: token.STRING, Lit: line[i:end]})
			i = end
			continue
		case c == '/' && !dialect.EndsOperand(prev()):
			end := jsRegexEnd(line, i)
			if end < 0 {
				return toks, false
			}
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: token.STRING, Lit: line[i:end]})
			i = end
			continue
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9':
			end, kind := jsNumber(line, i)
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: kind, Lit: line[i:end]})
			i = end
			continue
		}
		if end := jsIdentEnd(line, i); end > i {
			word := line[i:end]
			kind, ok := jsKeywords[word]
			if !ok || prev() == token.PERIOD {
				kind = token.IDENT // x.default, x.delete(): properties
			}
			toks = append(toks, dialect.Tok{Off: i, End: end, Tok: kind, Lit: word})
			i = end
			continue
		}
		matched := false
		for _, op := range jsOps {
			if !strings.HasPrefix(line[i:], op.text) {
				continue
			}
			kind := op.tok
			switch {
			case op.text == "?." && i+2 < len(line) && line[i+2] >= '0' && line[i+2] <= '9':
				continue // "a?.5:b" is a conditional
			case op.text == "<" && !dialect.EndsOperand(prev()):
				return toks, false // JSX, or a type assertion or parameters
			case op.text == "!" && dialect.EndsOperand(prev()):
				kind = jsOther // TypeScript's non-null assertion
			}
			toks = append(toks, dialect.Tok{Off: i, End: i + len(op.text), Tok: kind, Lit: op.text})
			i += len(op.text)
			matched = true
			break
		}
		if !matched {
			return toks, false // "#" not before a name, a backslash: not a line of code
		}
	}
	markGenerics(toks)
	return toks, true
}

// jsIdentEnd is the end of the identifier at i (with "$" and "_", and a
// private field's "#"), i when there is none.
func jsIdentEnd(line string, i int) int {
	start := i
	if line[i] == '#' {
		start++
	}
	end := start
	for end < len(line) {
		r, n := utf8.DecodeRuneInString(line[end:])
		if r != '_' && r != '$' && !unicode.IsLetter(r) && (end == start || !unicode.IsDigit(r)) {
			break
		}
		end += n
	}
	if end == start {
		return i
	}
	return end
}

// jsStringEnd is the end of the string or template literal opened at i, -1
// when it is not closed on the line. A template's substitutions are read
// through, with the strings and templates inside them.
func jsStringEnd(line string, i int) int {
	q := line[i]
	k := i + 1
	for k < len(line) {
		switch c := line[k]; {
		case c == '\\':
			k += 2
		case c == q:
			return k + 1
		case q == '`' && c == '$' && k+1 < len(line) && line[k+1] == '{':
			k = jsSubstitutionEnd(line, k+2)
			if k < 0 {
				return -1
			}
		default:
			k++
		}
	}
	return -1
}

// jsSubstitutionEnd is the position after the "}" closing a template's
// substitution whose expression starts at k.
func jsSubstitutionEnd(line string, k int) int {
	depth := 1
	for k < len(line) {
		switch c := line[k]; c {
		case '\'', '"', '`':
			k = jsStringEnd(line, k)
			if k < 0 {
				return -1
			}
			continue
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return k + 1
			}
		}
		k++
	}
	return -1
}

// jsRegexEnd is the end of the regular expression literal at i, its flags
// included: -1 when it is not closed on the line.
func jsRegexEnd(line string, i int) int {
	inClass := false
	for k := i + 1; k < len(line); k++ {
		switch line[k] {
		case '\\':
			k++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if inClass {
				continue
			}
			k++
			for k < len(line) && (line[k] >= 'a' && line[k] <= 'z') {
				k++
			}
			return k
		}
	}
	return -1
}

// jsNumber scans a number at i: decimal (with "_" separators), 0x, 0o, 0b,
// BigInt's "n" are INT; a point or an exponent makes it FLOAT.
func jsNumber(line string, i int) (end int, kind token.Token) {
	end, kind = i, token.INT
	lower := strings.ToLower(line[i:min(i+2, len(line))])
	radix := lower == "0x" || lower == "0o" || lower == "0b"
	if radix {
		end += 2
	}
	for end < len(line) {
		c := line[end]
		switch {
		case c >= '0' && c <= '9' || c == '_':
		case radix && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
		case !radix && c == '.':
			kind = token.FLOAT
		case !radix && (c == 'e' || c == 'E'):
			kind = token.FLOAT
			if end+1 < len(line) && (line[end+1] == '+' || line[end+1] == '-') {
				end++
			}
		case c == 'n':
			return end + 1, kind
		default:
			return end, kind
		}
		end++
	}
	return end, kind
}

// markGenerics makes TypeScript's type argument brackets ("Array<number>",
// "f<T>(x)", "Map<string, Set<number>>") jsOther, so that no template takes
// them for comparisons: a "<" right after a name, closed on the line by a
// ">" with only types between, and followed by what may follow a type.
func markGenerics(toks []dialect.Tok) {
	for i := 1; i < len(toks); i++ {
		if toks[i].Tok != token.LSS || toks[i-1].Tok != token.IDENT || toks[i-1].End != toks[i].Off {
			continue
		}
		depth, j := 1, i+1
	scan:
		for ; j < len(toks); j++ {
			switch t := toks[j]; t.Tok {
			case token.LSS:
				depth++
			case token.GTR:
				depth--
			case token.SHR:
				depth -= 2
			case jsOther:
				if t.Lit == ">>>" {
					depth -= 3
				} else {
					break scan
				}
			case token.IDENT, token.COMMA, token.PERIOD, token.LBRACK, token.RBRACK, token.OR, token.AND,
				token.STRING, token.INT, jsKeyword:
				continue
			default:
				break scan
			}
			if depth <= 0 {
				break
			}
		}
		if depth != 0 || j >= len(toks) {
			continue
		}
		if j+1 < len(toks) {
			switch toks[j+1].Tok {
			case token.LPAREN, token.RPAREN, token.ASSIGN, token.COMMA, token.SEMICOLON, token.LBRACK,
				token.RBRACK, token.LBRACE, token.OR, token.AND, token.GTR, token.PERIOD, token.COMMENT, jsOther:
			default:
				continue
			}
		}
		for k := i; k <= j; k++ {
			switch toks[k].Tok {
			case token.LSS, token.GTR, token.SHR, jsOther:
				toks[k].Tok = jsOther
			}
		}
		i = j
	}
}
