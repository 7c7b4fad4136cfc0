package golang

import (
	"go/format"
	"go/scanner"
	"go/token"
	"path"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/harness/offline/dialect"
)

// RepairDialect is Go as the offline policy's repair templates read it
// (the capability pkg/harness/offline asks for): .go files, the _test.go
// ones tests; a line tokenized by go/scanner; a function from its "func"
// line to its closing "}" at column 0.
func (Driver) RepairDialect() *dialect.Dialect { return &goDialect }

var goDialect = dialect.Dialect{
	Name:   "go",
	Owns:   func(p string) bool { return strings.HasSuffix(p, ".go") },
	IsTest: func(p string) bool { return strings.HasSuffix(p, "_test.go") },
	Scan:   scanLine,
	Skip: func(trimmed string) bool {
		return strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "import") ||
			strings.HasPrefix(trimmed, "package ") || strings.HasPrefix(trimmed, "type ")
	},
	Decl: func(line string, toks []dialect.Tok) bool {
		return toks[0].Tok == token.FUNC || toks[0].Tok == token.VAR && !strings.Contains(line, "=")
	},
	Spell:      func(_ string, t token.Token) string { return t.String() },
	Bools:      [2]string{"false", "true"},
	Not:        "!",
	Negate:     negateIf,
	LenBuiltin: true,
	Format:     format.Source,
	FuncSpan:   funcSpan,
	Def:        funcDeclRE,
	Declares:   regexp.MustCompile(`^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)`),
	DefLine:    func(line string, first bool) bool { return first && strings.HasPrefix(line, "func ") },
	TestFunc:   regexp.MustCompile(`^func (Test\w*)\(\w+ \*testing\.T\)`),
	PackageTest: func(p, pkg string) bool {
		return strings.HasSuffix(p, "_test.go") && (pkg == "" || path.Dir(p) == "." || strings.HasSuffix(pkg, "/"+path.Dir(p)) || pkg == path.Dir(p))
	},
}

// funcSpan is the span of the top-level declaration holding line n: from
// its "func" line to its closing "}" at column 0. ok is false outside
// functions.
func funcSpan(f dialect.Lines, n int, _ *any) (start, end int, name string, ok bool) {
	for s := n; s >= 1; s-- {
		t, known := f.Line(s)
		if !known {
			return 0, 0, "", false
		}
		if s != n && t == "}" {
			return 0, 0, "", false
		}
		if m := funcDeclRE.FindStringSubmatch(t); m != nil {
			for e := s; e <= f.Len(); e++ {
				if te, _ := f.Line(e); te == "}" || (e == s && strings.HasSuffix(te, "}")) {
					if e < n {
						return 0, 0, "", false
					}
					return s, e, m[1], true
				}
			}
			return s, f.Len(), m[1], true
		}
	}
	return 0, 0, "", false
}

var funcDeclRE = regexp.MustCompile(`^func\s+(?:\([^)]*\)\s*)?(\w+)`)

// negateIf negates the condition of an "if cond {" line whose condition is
// not already a single comparison (the comparison templates cover those) or
// a negation (TplNot covers it).
func negateIf(line string, toks []dialect.Tok) (dialect.Mutation, bool) {
	first := 0
	if len(toks) > 2 && toks[0].Tok == token.RBRACE && toks[1].Tok == token.ELSE {
		first = 2
	}
	if len(toks) < first+3 || toks[first].Tok != token.IF || toks[len(toks)-1].Tok != token.LBRACE {
		return dialect.Mutation{}, false
	}
	cond := toks[first+1 : len(toks)-1]
	simple := true
	cmps := 0
	for _, t := range cond {
		switch t.Tok {
		case token.SEMICOLON, token.DEFINE, token.ASSIGN, token.COMMENT:
			return dialect.Mutation{}, false
		case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
			cmps++
			simple = false
		case token.LAND, token.LOR, token.ADD, token.SUB, token.MUL, token.QUO, token.REM, token.AND, token.OR, token.XOR:
			simple = false
		}
	}
	if cond[0].Tok == token.NOT || (cmps == 1 && !strings.Contains(line, "&&") && !strings.Contains(line, "||")) {
		return dialect.Mutation{}, false
	}
	return dialect.Negated(line, cond, "!", simple), true
}

// scanLine tokenizes one line of Go; ok is false when it does not scan
// cleanly (inside a raw string, say).
func scanLine(line string) ([]dialect.Tok, bool) {
	src := []byte(line)
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	bad := false
	s.Init(file, src, func(token.Position, string) { bad = true }, scanner.ScanComments)
	var toks []dialect.Tok
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
		toks = append(toks, dialect.Tok{Off: off, End: off + n, Tok: t, Lit: lit})
	}
	return toks, !bad
}
