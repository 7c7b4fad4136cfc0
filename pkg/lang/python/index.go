package python

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/codeindex"
)

// Index indexes the checkout's Python declarations with tree-sitter's
// Python grammar: classes (codeindex.KindStruct: a type with fields and
// methods, which every type lookup finds), module-level functions
// (KindFunc) and methods (KindMethod, their class the Receiver), nested
// classes and their methods included; functions defined inside functions
// are not. Virtual environments, caches, node_modules and hidden
// directories are not indexed.
func (d Driver) Index(dir string) (*codeindex.Index, error) {
	return codeindex.BuildWith(dir, codeindex.Parser{
		Source:  func(rel string) bool { return strings.HasSuffix(rel, ".py") },
		SkipDir: skipDir,
		Parse:   parseSymbols,
		IsTest:  d.IsTestFile,
	})
}

// def is a declaration of a Python file.
type def struct {
	name    string
	classes []string // the classes it is in, outermost first
	class   bool     // a class, else a function
	// line and endLine are 1-based; a decorated declaration starts at its
	// first decorator.
	line, endLine int
	signature     string
}

// parseSymbols is the codeindex.Parser's Parse.
func parseSymbols(rel string, src []byte) []codeindex.Symbol {
	var out []codeindex.Symbol
	for _, d := range parseDefs(src) {
		s := codeindex.Symbol{Name: d.name, File: rel, Line: d.line, EndLine: d.endLine, Signature: d.signature}
		switch {
		case d.class:
			s.Kind = codeindex.KindStruct
		case len(d.classes) > 0:
			s.Kind, s.Receiver = codeindex.KindMethod, d.classes[len(d.classes)-1]
		default:
			s.Kind = codeindex.KindFunc
		}
		out = append(out, s)
	}
	return out
}

// parseDefs parses src with tree-sitter and returns its classes and the
// functions of its module and classes, in the file's order. Definitions
// under if, try, with and their else/except/finally blocks count (a test
// defined under "if sys.platform ..." is a test); those in a function's
// body do not. A file that does not parse yields what the parser
// recovered.
func parseDefs(src []byte) []def {
	t, ok := parse(src)
	if !ok {
		return nil
	}
	defer t.close()
	var out []def
	walkDefs(t.root(), src, nil, &out)
	return out
}

// walkDefs adds the definitions among n's children to out; classes are the
// classes n is in.
func walkDefs(n *sitter.Node, src []byte, classes []string, out *[]def) {
	for i := uint(0); i < n.NamedChildCount(); i++ {
		c := n.NamedChild(i)
		if c == nil {
			continue
		}
		outer := c
		if c.Kind() == "decorated_definition" {
			c = c.ChildByFieldName("definition")
			if c == nil {
				continue
			}
		}
		switch c.Kind() {
		case "function_definition", "class_definition":
			name := c.ChildByFieldName("name")
			body := c.ChildByFieldName("body")
			if name == nil {
				continue
			}
			d := def{
				name:      name.Utf8Text(src),
				classes:   classes,
				class:     c.Kind() == "class_definition",
				line:      int(outer.StartPosition().Row) + 1,
				endLine:   int(outer.EndPosition().Row) + 1,
				signature: signature(c, body, src),
			}
			*out = append(*out, d)
			if d.class && body != nil {
				walkDefs(body, src, append(append([]string(nil), classes...), d.name), out)
			}
		case "if_statement", "try_statement", "with_statement", "block",
			"else_clause", "elif_clause", "except_clause", "except_group_clause", "finally_clause":
			walkDefs(c, src, classes, out)
		}
	}
}

// maxSignature bounds a signature's characters.
const maxSignature = 300

// signature is a definition's head as written, up to its colon: "def
// add(a, b) -> int", "class C(Base)", blanks collapsed.
func signature(n, body *sitter.Node, src []byte) string {
	end := n.EndByte()
	if body != nil {
		end = body.StartByte()
	}
	for i := uint(0); i < n.ChildCount(); i++ {
		if c := n.Child(i); c != nil && c.Kind() == ":" {
			end = c.StartByte()
		}
	}
	head := strings.Join(strings.Fields(string(src[n.StartByte():end])), " ")
	if r := []rune(head); len(r) > maxSignature {
		head = string(r[:maxSignature]) + "…"
	}
	return head
}
