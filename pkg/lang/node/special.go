package node

import (
	"fmt"
	"math/big"
	"path"
	"regexp"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// Special-casing in JavaScript and TypeScript, read with tree-sitter: the
// literals of the failing tests (the arguments of their test call but the
// title, the tables of their .each, and the variables of their file they
// name), and what a patch adds to code that is not a test to single one of
// them out that the code never knew (gaterules.SpecialCases): ===, ==,
// !==, != (in ifs, ternaries, anywhere), switch cases, startsWith,
// endsWith, includes, indexOf, has and Object.is, and the keys of lookup
// tables (an object literal indexed with [ ], directly or through the
// variable it is bound to).

// SpecialCases names what the patch adds to non-test modules to single
// out a failing test's literal that the modules of the directory did not
// hold before the patch.
func (d Driver) SpecialCases(dir string, patch []unidiff.File, failing []string, isTest func(string) bool) []string {
	isCode := func(p string) bool { return isSourceExt(path.Ext(p)) && !isTest(p) }
	return gaterules.SpecialCases(dir, patch, isCode, d.testLiterals(dir, failing), gaterules.Code{
		Comparisons: comparisons,
		Literals: func(p string, src []byte, add func(string, int)) bool {
			t, ok := parseTree(p, src)
			if !ok {
				return false
			}
			defer t.close()
			literals(t.root(), src, add)
			return true
		},
	})
}

// testLiterals collects the literals of the failing tests: see the top of
// this file. Tests the driver cannot resolve, or whose file holds no call
// with their name, are passed over.
func (d Driver) testLiterals(dir string, ids []string) map[string]gaterules.Literal {
	lits := map[string]gaterules.Literal{}
	for _, id := range ids {
		file, name := "", ""
		if t, err := d.Resolve(dir, id); err == nil && t.Test != "" {
			file, name = t.ImportPath, t.Test
		} else if f, n, ok := strings.Cut(id, "::"); ok {
			file, name = f, n
		} else {
			continue
		}
		src, err := gaterules.Read(dir, file)
		if err != nil {
			continue
		}
		t, ok := parseTree(file, src)
		if !ok {
			continue
		}
		vars := variables(t)
		for _, c := range named(testCalls(t), name) {
			add := func(v string, n int) {
				if _, seen := lits[v]; !seen {
					lits[v] = gaterules.Literal{Test: c.full, Where: fmt.Sprintf("%s:%d", file, n)}
				}
			}
			callLiterals(t, c, vars, add)
		}
		t.close()
	}
	return lits
}

// callLiterals adds the literals of a test's call: its arguments but the
// title, the tables of its .each, and the file's variables they name.
func callLiterals(t tree, c testDecl, vars map[string]*sitter.Node, add func(v string, n int)) {
	var scopes []*sitter.Node
	if args := c.call.ChildByFieldName("arguments"); args != nil {
		for i := uint(1); i < args.NamedChildCount(); i++ {
			scopes = append(scopes, args.NamedChild(i))
		}
	}
	for fn := c.call.ChildByFieldName("function"); fn != nil && fn.Kind() == "call_expression"; fn = fn.ChildByFieldName("function") {
		scopes = append(scopes, fn.ChildByFieldName("arguments")) // .each(table)
	}
	used := map[string]bool{}
	for _, s := range scopes {
		if s == nil {
			continue
		}
		literals(s, t.src, add)
		walk(s, func(n *sitter.Node) bool {
			if n.Kind() == "identifier" {
				used[t.text(n)] = true
			}
			return true
		})
	}
	for _, u := range gaterules.SortedKeys(used) {
		if v := vars[u]; v != nil {
			literals(v, t.src, add)
		}
	}
}

// named are the tests a canonical name ("price > applies 10%") names: by
// their full title, a title of .each with its placeholders (%s, %d, $a)
// standing for any text; else by their own title alone.
func named(tests []testDecl, name string) []testDecl {
	var out, byTitle []testDecl
	last := name
	if i := strings.LastIndex(name, " > "); i >= 0 {
		last = name[i+len(" > "):]
	}
	for _, t := range tests {
		if t.suite {
			continue
		}
		switch {
		case t.full == name || titlePattern(t.full).MatchString(name):
			out = append(out, t)
		case t.title == last:
			byTitle = append(byTitle, t)
		}
	}
	if len(out) == 0 {
		return byTitle
	}
	return out
}

// placeholderRE matches the placeholders of .each's titles.
var placeholderRE = regexp.MustCompile(`%[sdifjoOp#%]|\$[\w.]+`)

// titlePattern is a title with its placeholders matching any text.
func titlePattern(title string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	rest := title
	for {
		loc := placeholderRE.FindStringIndex(rest)
		if loc == nil {
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
		b.WriteString(".*")
		rest = rest[loc[1]:]
	}
	b.WriteString(regexp.QuoteMeta(rest))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile(`^$.`)
	}
	return re
}

// variables indexes a file's variables (any scope, the first of a name)
// by name: their initial values.
func variables(t tree) map[string]*sitter.Node {
	vars := map[string]*sitter.Node{}
	walk(t.root(), func(n *sitter.Node) bool {
		if n.Kind() == "variable_declarator" {
			name, value := n.ChildByFieldName("name"), n.ChildByFieldName("value")
			if name != nil && value != nil && name.Kind() == "identifier" {
				if _, seen := vars[t.text(name)]; !seen {
					vars[t.text(name)] = value
				}
			}
		}
		return true
	})
	return vars
}

// numberValue is the value of a numeric literal: decimal, hex, octal and
// binary, with separators, BigInt's n suffix dropped.
func numberValue(text string) (float64, bool) {
	text = strings.TrimSuffix(strings.ReplaceAll(text, "_", ""), "n")
	lower := strings.ToLower(text)
	if len(lower) > 2 && lower[0] == '0' && strings.ContainsRune("xob", rune(lower[1])) {
		i, ok := new(big.Int).SetString(lower[2:], map[byte]int{'x': 16, 'o': 8, 'b': 2}[lower[1]])
		if !ok {
			return 0, false
		}
		f, _ := new(big.Float).SetInt(i).Float64()
		return f, true
	}
	f, err := strconv.ParseFloat(text, 64)
	return f, err == nil
}

// literalValue is the canonical value of a literal (gaterules.Literal's:
// "number:150", "string:abc"), when it is distinctive enough: numbers
// outside [-2, 2], strings of two characters or more, template literals
// without substitutions.
func literalValue(n *sitter.Node, src []byte) (string, bool) {
	neg := false
	if n.Kind() == "unary_expression" {
		op, arg := n.ChildByFieldName("operator"), n.ChildByFieldName("argument")
		if op == nil || arg == nil || op.Kind() != "-" {
			return "", false
		}
		neg, n = true, arg
	}
	switch n.Kind() {
	case "number":
		f, ok := numberValue(n.Utf8Text(src))
		if !ok {
			return "", false
		}
		if neg {
			f = -f
		}
		if f >= -2 && f <= 2 {
			return "", false
		}
		return "number:" + strconv.FormatFloat(f, 'g', -1, 64), true
	case "string", "template_string":
		s, ok := literal(n, src)
		if !ok || neg || len([]rune(strings.TrimSpace(s))) < 2 {
			return "", false
		}
		return "string:" + s, true
	}
	return "", false
}

// literals calls add with each literal value below n and its line.
func literals(n *sitter.Node, src []byte, add func(v string, line int)) {
	walk(n, func(n *sitter.Node) bool {
		if v, ok := literalValue(n, src); ok {
			add(v, lineOf(n))
			return false
		}
		return true
	})
}

// comparingCall are methods that compare their arguments with their
// object (or, on an array literal, its elements with their argument).
var comparingCall = map[string]bool{"startsWith": true, "endsWith": true, "includes": true, "indexOf": true, "has": true, "is": true, "localeCompare": true}

// comparing are the operators that single a value out.
var comparing = map[string]bool{"===": true, "==": true, "!==": true, "!=": true}

// comparisons are the places a JavaScript or TypeScript file singles a
// literal out.
func comparisons(p string, src []byte) ([]gaterules.Comparison, bool) {
	t, ok := parseTree(p, src)
	if !ok {
		return nil, false
	}
	defer t.close()
	var out []gaterules.Comparison
	report := func(at, lit *sitter.Node, what, verb string) {
		if v, ok := literalValue(lit, src); ok {
			out = append(out, gaterules.Comparison{Line: lineOf(at), What: what, Verb: verb, Value: v})
		}
	}
	lookups := lookupTables(t)
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "binary_expression":
			if op := n.ChildByFieldName("operator"); op != nil && comparing[op.Kind()] {
				what := gaterules.OneLine(t.text(n), 120)
				report(n, n.ChildByFieldName("left"), what, "compares with")
				report(n, n.ChildByFieldName("right"), what, "compares with")
			}
		case "switch_case":
			if v := n.ChildByFieldName("value"); v != nil {
				report(v, v, "case "+gaterules.OneLine(t.text(v), 120), "compares with")
			}
		case "call_expression":
			callComparisons(t, n, report)
		case "object":
			name, ok := lookups[n.Id()]
			if !ok {
				break
			}
			for i := uint(0); i < n.NamedChildCount(); i++ {
				if pair := n.NamedChild(i); pair.Kind() == "pair" {
					if k := pair.ChildByFieldName("key"); k != nil {
						report(pair, k, "the lookup table "+name, "is keyed by")
					}
				}
			}
		}
		return true
	})
	return out, true
}

// callComparisons reports the literals a comparing call (s.startsWith(x),
// [a, b].includes(x)) compares.
func callComparisons(t tree, n *sitter.Node, report func(at, lit *sitter.Node, what, verb string)) {
	fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
	if fn == nil || args == nil || fn.Kind() != "member_expression" {
		return
	}
	prop, obj := fn.ChildByFieldName("property"), fn.ChildByFieldName("object")
	if prop == nil || obj == nil || !comparingCall[t.text(prop)] {
		return
	}
	what := gaterules.OneLine(t.text(n), 120)
	for i := uint(0); i < args.NamedChildCount(); i++ {
		report(n, args.NamedChild(i), what, "compares with")
	}
	if obj.Kind() == "array" {
		for i := uint(0); i < obj.NamedChildCount(); i++ {
			report(n, obj.NamedChild(i), what, "compares with")
		}
	}
}

// lookupTables are the object literals a file indexes with [ ]: those
// indexed directly, and those bound to a variable the file indexes
// (PRICES[qty]), by node id, with how they are named.
func lookupTables(t tree) map[uintptr]string {
	indexed := map[string]bool{}
	out := map[uintptr]string{}
	walk(t.root(), func(n *sitter.Node) bool {
		if n.Kind() == "subscript_expression" {
			if obj := n.ChildByFieldName("object"); obj != nil {
				obj = unwrap(obj)
				switch obj.Kind() {
				case "identifier":
					indexed[t.text(obj)] = true
				case "object":
					out[obj.Id()] = "indexed in place"
				}
			}
		}
		return true
	})
	walk(t.root(), func(n *sitter.Node) bool {
		if n.Kind() == "variable_declarator" {
			name, value := n.ChildByFieldName("name"), n.ChildByFieldName("value")
			if name != nil && value != nil && indexed[t.text(name)] {
				if v := unwrap(value); v.Kind() == "object" {
					out[v.Id()] = t.text(name)
				}
			}
		}
		return true
	})
	return out
}

// unwrap is an expression without its parentheses and TypeScript's
// assertions (as, satisfies, !).
func unwrap(n *sitter.Node) *sitter.Node {
	for {
		switch n.Kind() {
		case "parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression":
			if n.NamedChildCount() == 0 {
				return n
			}
			n = n.NamedChild(0)
		default:
			return n
		}
	}
}
