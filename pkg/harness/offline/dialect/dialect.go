// Package dialect is what the offline policy's repair templates ask of a
// language: which files are its code and its tests, a line's tokens (as
// go/token's kinds, which name the operators the languages share), how it
// spells them, the lines and forms that are its own, its functions' spans
// and its tests' functions. Each driver under pkg/lang describes its
// language's dialect; the policy (pkg/harness/offline) applies the
// templates through it and names no language.
package dialect

import (
	"go/token"
	"regexp"
)

// Tok is one token of a line: its bytes off..end, its kind and, for a
// name or a literal, its text.
type Tok struct {
	Off, End int
	Tok      token.Token
	Lit      string
}

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

// Lines are a file's lines as the policy knows them: line n (1-based) and
// whether an observation showed it; Len is the number of lines.
type Lines interface {
	Line(n int) (string, bool)
	Len() int
}

// Location is a line of a file.
type Location struct {
	Path string
	Line int
}

// Dialect is one language as the repair templates read it. The functions
// that may be nil say what a nil one means.
type Dialect struct {
	// Name is the name of the driver that describes the dialect.
	Name string
	// Owns reports a file of the language, code or tests, by its path.
	Owns func(path string) bool
	// IsTest reports a file of tests (which the templates never change).
	IsTest func(path string) bool
	// Ignored reports a file of the language that is no code to repair
	// (a declaration file, an installed package); nil: none.
	Ignored func(path string) bool

	// Scan tokenizes one line; ok is false when it does not scan cleanly
	// (inside a multi-line string, say).
	Scan func(line string) ([]Tok, bool)
	// Skip reports a line (trimmed) no template applies to: comments,
	// imports, type declarations.
	Skip func(trimmed string) bool
	// Decl reports a declaration's line, where only constants change.
	Decl func(line string, toks []Tok) bool
	// Spell is how the language writes the operator to, which replaces
	// the operator written was.
	Spell func(was string, to token.Token) string
	// Bools are the language's false and true; Not its negation.
	Bools [2]string
	Not   string
	// Negate negates a condition the line tests.
	Negate func(line string, toks []Tok) (Mutation, bool)
	// LenBuiltin: len(x) is the length of x.
	LenBuiltin bool
	// Spaced: the language's style writes an index's one-off as "i - 1",
	// not "i-1".
	Spaced bool
	// Extra are the templates of the language's own forms, on a line that
	// is not a declaration; nil: none.
	Extra func(line string, toks []Tok) []Mutation

	// Format is the language's formatter, which a candidate's file is
	// compared in (a file not formatted to begin with is compared as it
	// is); nil: none.
	Format func(src []byte) ([]byte, error)

	// Code reports whether line n of a file holds code (not a comment's
	// or a string's line); nil: every line. The analysis it keeps of the
	// file's lines (cache) is kept by the caller for the lines as they are
	// and dropped when they change.
	Code func(f Lines, n int, cache *any) bool
	// FuncSpan is the span of the function holding line n, and its name;
	// ok is false outside functions or where a line between is unknown.
	FuncSpan func(f Lines, n int, cache *any) (start, end int, name string, ok bool)
	// Def matches a function's declaration line, its name the first
	// group: the functions Funcs lists when it is nil.
	Def *regexp.Regexp
	// Funcs lists the file's functions: name → [start, end]; nil: those
	// of the lines Def matches, with their FuncSpan.
	Funcs func(f Lines, cache *any) map[string][2]int
	// Declares matches a line declaring a function or a class, its name
	// the first group: what a blame commit's hunk adds or sits in; nil:
	// none.
	Declares *regexp.Regexp
	// DefLine reports a function's declaration line, which a function's
	// calls are not read from (first: the line starts the function's
	// span); nil: none.
	DefLine func(line string, first bool) bool
	// NotCall reports a name called that is not the code under test (a
	// builtin, the test framework's helpers); nil: none.
	NotCall func(name string) bool

	// A language that names a test by its file and its title (the failure's
	// package is the test's file) reads the failing test there: Title is a
	// test's own title (of its id's test part); TestLine the line of f
	// declaring the test titled title, ok false when none or more than one
	// does; TestCall the span of the test's call holding line n (with its
	// callback); Tests counts the tests f declares. A nil TestLine: the
	// language's tests are read by their functions.
	Title    func(test string) string
	TestLine func(f Lines, title string) (int, bool)
	TestCall func(f Lines, n int, cache *any) (start, end int, ok bool)
	Tests    func(f Lines) int
	// Stack reads a failure's output for its frames in the repository: the
	// functions they name, innermost first, and their places; nil: a
	// failure's frames are the report's.
	Stack func(output string) (names []string, locs []Location)
	// Got are the values a failure's message reports getting; nil: the
	// policy's reading ("got 5, want 6").
	Got func(msg string) []string

	// TestFunc matches a test function's line, its name the first group;
	// nil: the language's tests are not read by their functions.
	TestFunc *regexp.Regexp
	// PackageTest reports a file of tests of the failing tests' package
	// pkg, whose tests are run beside them; nil: none.
	PackageTest func(path, pkg string) bool
}

// EndsOperand reports whether a token can end an operand, so that an
// operator after it is binary.
func EndsOperand(t token.Token) bool {
	switch t {
	case token.IDENT, token.INT, token.FLOAT, token.IMAG, token.CHAR, token.STRING,
		token.RPAREN, token.RBRACK, token.RBRACE:
		return true
	}
	return false
}

// MatchParen returns the index of the token closing the parenthesis at i,
// -1 when none does.
func MatchParen(toks []Tok, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].Tok {
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

// Negated is the TplNegate mutation of line whose tested condition is the
// tokens cond: the condition written after not (the language's negation,
// "!" or "not "), in parentheses unless simple (a lone operand).
func Negated(line string, cond []Tok, not string, simple bool) Mutation {
	start, end := cond[0].Off, cond[len(cond)-1].End
	c := line[start:end]
	repl := not + "(" + c + ")"
	if simple {
		repl = not + c
	}
	return Mutation{New: line[:start] + repl + line[end:], Template: TplNegate, What: "negate the condition `" + c + "`", Prior: 2}
}
