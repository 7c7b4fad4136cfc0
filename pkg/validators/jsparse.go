package validators

import (
	"math/big"
	"path"
	"strconv"
	"strings"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"
	sitterjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	sitterts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// JavaScript and TypeScript as the gates read them: tree-sitter's
// JavaScript grammar (with JSX) for .js, .jsx, .mjs and .cjs, its
// TypeScript grammar for .ts, .mts and .cts and its TSX grammar for .tsx.
// The node kinds the gates look at are the same in the three.

// jsExts are the extensions of JavaScript and TypeScript modules, in the
// order an extensionless specifier is resolved.
var jsExts = []string{".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"}

// isJSSource reports a JavaScript or TypeScript module (a .d.ts file
// declares types only, but it is TypeScript too).
func isJSSource(p string) bool {
	switch path.Ext(p) {
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return true
	}
	return false
}

var (
	jsLangOnce sync.Once
	jsLang     *sitter.Language
	tsLang     *sitter.Language
	tsxLang    *sitter.Language
)

// jsGrammar is the grammar that reads the file rel.
func jsGrammar(rel string) *sitter.Language {
	jsLangOnce.Do(func() {
		jsLang = sitter.NewLanguage(sitterjs.Language())
		tsLang = sitter.NewLanguage(sitterts.LanguageTypescript())
		tsxLang = sitter.NewLanguage(sitterts.LanguageTSX())
	})
	switch path.Ext(rel) {
	case ".ts", ".mts", ".cts":
		return tsLang
	case ".tsx":
		return tsxLang
	}
	return jsLang
}

// jsTree is a parsed JavaScript or TypeScript file; close it.
type jsTree struct {
	tree *sitter.Tree
	src  []byte
}

func (t jsTree) root() *sitter.Node { return t.tree.RootNode() }
func (t jsTree) close()             { t.tree.Close() }
func (t jsTree) text(n *sitter.Node) string {
	return n.Utf8Text(t.src)
}

// parseJS parses src as the file rel, ok false when tree-sitter cannot.
// A file with syntax errors is still read: tree-sitter recovers, and the
// parts it understood are what the gates look at.
func parseJS(rel string, src []byte) (jsTree, bool) {
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(jsGrammar(rel)); err != nil {
		return jsTree{}, false
	}
	tree := parser.Parse(src, nil)
	if tree == nil {
		return jsTree{}, false
	}
	return jsTree{tree, src}, true
}

// walkJS calls fn on n and every named node below it, in order, skipping
// what is below a node fn returns false for.
func walkJS(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walkJS(n.NamedChild(i), fn)
	}
}

// line is the 1-based line n starts on.
func line(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

// pyAssert is an assertion statement of a file.
type pyAssert struct {
	text      string // its text, blanks collapsed
	first     string // its first line
	line      int
	multiline bool
}

// jsStringText is the value of a string literal or of a template literal
// without substitutions, ok false for anything else.
func jsStringText(n *sitter.Node, src []byte) (string, bool) {
	switch n.Kind() {
	case "string", "template_string":
	default:
		return "", false
	}
	var b strings.Builder
	for i := uint(0); i < n.NamedChildCount(); i++ {
		switch c := n.NamedChild(i); c.Kind() {
		case "string_fragment":
			b.WriteString(c.Utf8Text(src))
		case "escape_sequence":
			if s, err := strconv.Unquote(`"` + c.Utf8Text(src) + `"`); err == nil {
				b.WriteString(s)
			} else {
				b.WriteString(c.Utf8Text(src))
			}
		case "template_substitution":
			return "", false
		}
	}
	if n.Kind() == "template_string" && n.NamedChildCount() == 0 {
		// The grammar keeps a template's text in the node itself.
		t := n.Utf8Text(src)
		return strings.TrimSuffix(strings.TrimPrefix(t, "`"), "`"), true
	}
	return b.String(), true
}

// jsNumber is the value of a numeric literal: decimal, hex, octal and
// binary, with separators, BigInt's n suffix dropped.
func jsNumber(text string) (float64, bool) {
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

// jsLiteralValue is the canonical value of a literal, as literalValue's
// for Go ("number:150", "string:abc"), when it is distinctive enough:
// numbers outside [-2, 2], strings of two characters or more, template
// literals without substitutions.
func jsLiteralValue(n *sitter.Node, src []byte) (string, bool) {
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
		f, ok := jsNumber(n.Utf8Text(src))
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
		s, ok := jsStringText(n, src)
		if !ok || neg || len([]rune(strings.TrimSpace(s))) < 2 {
			return "", false
		}
		return "string:" + s, true
	}
	return "", false
}

// jsLiterals calls add with each literal value below n and its line.
func jsLiterals(n *sitter.Node, src []byte, add func(v string, line int)) {
	walkJS(n, func(n *sitter.Node) bool {
		if v, ok := jsLiteralValue(n, src); ok {
			add(v, line(n))
			return false
		}
		return true
	})
}

// jsCallee is the name a call is made through, its member chain written
// out ("it", "describe.skip", "expect.soft", "test.each"), with the calls
// of a chain dropped: it.each(table)("title", fn) is "it.each". Other
// callees give "".
func jsCallee(call *sitter.Node, src []byte) string {
	fn := call.ChildByFieldName("function")
	var parts []string
	for fn != nil {
		switch fn.Kind() {
		case "identifier", "this":
			parts = append(parts, fn.Utf8Text(src))
			fn = nil
		case "member_expression":
			if p := fn.ChildByFieldName("property"); p != nil {
				parts = append(parts, p.Utf8Text(src))
			}
			fn = fn.ChildByFieldName("object")
		case "call_expression":
			fn = fn.ChildByFieldName("function")
		default:
			return ""
		}
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".")
}
