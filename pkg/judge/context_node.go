package judge

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
	sitterjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	sitterts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"

	"github.com/redfix/redfix/pkg/untrusted"
)

// The context of a JavaScript or TypeScript test, named "FILE::NAME" (NAME
// its describe blocks' titles and its own joined by " > "): the test's own
// call (it or test, with its callback) and the beforeEach and beforeAll
// hooks of the describe blocks around it and of its file, found with
// tree-sitter's grammars. Each is quoted from its own text only, whole or
// cut at a line boundary with a marker: never into a neighbouring test.

// jsTestExts are the extensions of JavaScript's and TypeScript's files.
var jsTestExts = map[string]bool{".js": true, ".jsx": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true, ".mts": true, ".cts": true}

// isJSFile reports a JavaScript or TypeScript file by its extension.
func isJSFile(rel string) bool { return jsTestExts[path.Ext(rel)] }

// jsGrammar is the grammar of a file by its extension: TypeScript's for
// .ts, .mts and .cts, TSX's for .tsx, JavaScript's (with JSX) else.
func jsGrammar(rel string) *sitter.Language {
	switch path.Ext(rel) {
	case ".ts", ".mts", ".cts":
		return sitter.NewLanguage(sitterts.LanguageTypescript())
	case ".tsx":
		return sitter.NewLanguage(sitterts.LanguageTSX())
	}
	return sitter.NewLanguage(sitterjs.Language())
}

// The functions that declare suites, tests and the hooks quoted with a
// test, in jest, vitest, mocha and node:test.
var (
	jsSuiteFuncs = map[string]bool{"describe": true, "context": true, "suite": true, "fdescribe": true, "xdescribe": true}
	jsTestFuncs  = map[string]bool{"it": true, "test": true, "specify": true, "fit": true, "xit": true, "xtest": true}
	jsHookFuncs  = map[string]bool{"beforeEach": true, "beforeAll": true, "before": true}
)

// jsSuite is a describe block (or the file, its title empty) and the hooks
// called directly in it.
type jsSuite struct {
	title string
	outer *jsSuite
	hooks [][2]uint // the hooks' byte ranges
}

// jsTest is a test call, its suite, and its byte range.
type jsTest struct {
	names      []string
	suite      *jsSuite
	start, end uint
	line       int
}

// jsTestSources quotes the test name of file: its call, then the hooks of
// the suites around it, innermost last; then the data files its strings
// name. Without a test of that full name, a test whose title alone is
// name's last part stands in when it is the only one.
func jsTestSources(dir, file, name string) []Source {
	src, err := untrusted.ReadText(dir, file, maxSourceFile)
	if err != nil {
		return nil
	}
	b := []byte(src)
	parser := sitter.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(jsGrammar(file)); err != nil {
		return nil
	}
	tree := parser.Parse(b, nil)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	var tests []jsTest
	walkJSTests(tree.RootNode(), b, &jsSuite{}, &tests)
	want := strings.Split(name, " > ")
	var hit *jsTest
	for i, t := range tests {
		if strings.Join(t.names, " > ") == name {
			hit = &tests[i]
			break
		}
	}
	if hit == nil {
		for i, t := range tests {
			if t.names[len(t.names)-1] == want[len(want)-1] {
				if hit != nil {
					return nil // more than one: not this test's source for sure
				}
				hit = &tests[i]
			}
		}
	}
	if hit == nil {
		return nil
	}
	text := quoteRange(src, hit.start, hit.end, maxTestSource*2/3)
	var chain []*jsSuite
	for s := hit.suite; s != nil; s = s.outer {
		chain = append([]*jsSuite{s}, chain...)
	}
	for _, s := range chain {
		for _, h := range s.hooks {
			left := maxTestSource - len(text) - 2
			if left < 200 {
				text += "\n\n[… more hooks not shown …]"
				break
			}
			text += "\n\n" + quoteRange(src, h[0], h[1], left)
		}
	}
	var lits []string
	for _, m := range quoted.FindAllStringSubmatch(text, -1) {
		lits = append(lits, m[1]+m[2])
	}
	out := []Source{{Name: strings.Join(hit.names, " > ") + " (" + file + ":" + strconv.Itoa(hit.line) + ")", Text: text}}
	return append(out, dataFiles(dir, filepath.Join(dir, filepath.FromSlash(path.Dir(file))), lits)...)
}

// walkJSTests finds the suites, tests and hooks under n, in suite.
func walkJSTests(n *sitter.Node, src []byte, suite *jsSuite, out *[]jsTest) {
	if n.Kind() == "call_expression" {
		fn, title, ok := jsCall(n, src)
		switch {
		case ok && jsTestFuncs[fn]:
			var names []string
			for s := suite; s != nil; s = s.outer {
				if s.title != "" {
					names = append([]string{s.title}, names...)
				}
			}
			start, end := stmtRange(n)
			*out = append(*out, jsTest{names: append(names, title), suite: suite, start: start, end: end, line: int(n.StartPosition().Row) + 1})
			return // a test's body holds no tests
		case ok && jsSuiteFuncs[fn]:
			inner := &jsSuite{title: title, outer: suite}
			if args := n.ChildByFieldName("arguments"); args != nil {
				walkJSChildren(args, src, inner, out)
			}
			return
		case jsHookFuncs[fn]:
			start, end := stmtRange(n)
			suite.hooks = append(suite.hooks, [2]uint{start, end})
			return
		}
	}
	walkJSChildren(n, src, suite, out)
}

func walkJSChildren(n *sitter.Node, src []byte, suite *jsSuite, out *[]jsTest) {
	for i := uint(0); i < n.NamedChildCount(); i++ {
		if c := n.NamedChild(i); c != nil {
			walkJSTests(c, src, suite, out)
		}
	}
}

// jsCall is the function a call names (its object's name for it.only or
// describe.skip; none for it.each(…)(…), whose titles are made at run
// time) and, when ok, its first argument's literal text.
func jsCall(n *sitter.Node, src []byte) (fn, title string, ok bool) {
	f := n.ChildByFieldName("function")
	for f != nil && f.Kind() == "member_expression" {
		if p := f.ChildByFieldName("property"); p != nil && p.Utf8Text(src) == "each" {
			return "", "", false
		}
		f = f.ChildByFieldName("object")
	}
	if f == nil || f.Kind() != "identifier" {
		return "", "", false
	}
	fn = f.Utf8Text(src)
	args := n.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return fn, "", false
	}
	first := args.NamedChild(0)
	if first == nil {
		return fn, "", false
	}
	switch first.Kind() {
	case "string":
		title, ok = unquoteJS(first.Utf8Text(src))
	case "template_string":
		raw := first.Utf8Text(src)
		if first.NamedChildCount() == 0 || !strings.Contains(raw, "${") {
			title, ok = strings.Trim(raw, "`"), true
		}
	}
	return fn, title, ok
}

// unquoteJS is a string literal's value, for the escapes a title uses.
func unquoteJS(lit string) (string, bool) {
	if len(lit) < 2 {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	if !strings.Contains(body, `\`) {
		return body, true
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' && i+1 < len(body) {
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(body[i])
			}
			continue
		}
		b.WriteByte(body[i])
	}
	return b.String(), true
}

// stmtRange is the byte range of a call with the statement it makes (its
// ";" included).
func stmtRange(n *sitter.Node) (uint, uint) {
	if p := n.Parent(); p != nil && p.Kind() == "expression_statement" {
		return p.StartByte(), p.EndByte()
	}
	return n.StartByte(), n.EndByte()
}

// quoteRange is src[start:end] from the beginning of its first line when
// only blanks come before it there, whole if it fits in max bytes, else
// cut at the end of a line with a marker saying how many lines are left
// out.
func quoteRange(src string, start, end uint, max int) string {
	s := int(start)
	for s > 0 && (src[s-1] == ' ' || src[s-1] == '\t') {
		s--
	}
	if s > 0 && src[s-1] != '\n' {
		s = int(start) // something else shares the line: the call alone
	}
	text := src[s:int(end)]
	if len(text) <= max {
		return text
	}
	cut := strings.LastIndexByte(text[:max], '\n')
	if cut <= 0 {
		// One line longer than the room: no line boundary to cut at.
		return fmt.Sprintf("[… a line of %d bytes not shown …]", len(text))
	}
	rest := strings.Count(text[cut+1:], "\n") + 1
	return fmt.Sprintf("%s\n[… %d more lines not shown …]", text[:cut], rest)
}
