package node

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/codeindex"
)

// Index indexes the checkout's JavaScript and TypeScript declarations with
// tree-sitter's grammars: functions (declarations, and arrow functions or
// function expressions assigned to a const, let or var: KindFunc),
// classes (KindStruct) and their methods (KindMethod, the class their
// Receiver), TypeScript's interfaces (KindInterface), type aliases and
// enums (KindType); exported or not, at a module's top level (export
// default included) or in a namespace. Functions inside functions are not.
// node_modules, builds, coverage reports and hidden directories are not
// indexed.
func (d Driver) Index(dir string) (*codeindex.Index, error) {
	return codeindex.BuildWith(dir, codeindex.Parser{
		Source:  d.IsSource,
		SkipDir: skipDir,
		Parse:   parseSymbols,
		IsTest:  d.IsTestFile,
	})
}

// parseSymbols is the codeindex.Parser's Parse.
func parseSymbols(rel string, src []byte) []codeindex.Symbol {
	var out []codeindex.Symbol
	parse(rel, src, func(root *sitter.Node) {
		walkDecls(root, rel, src, &out)
	})
	return out
}

// walkDecls adds the declarations among n's children to out.
func walkDecls(n *sitter.Node, rel string, src []byte, out *[]codeindex.Symbol) {
	for i := uint(0); i < n.NamedChildCount(); i++ {
		c := n.NamedChild(i)
		if c == nil {
			continue
		}
		outer := c
		if c.Kind() == "export_statement" {
			if decl := c.ChildByFieldName("declaration"); decl != nil {
				c = decl
			} else if v := c.ChildByFieldName("value"); v != nil {
				c = v
			}
		}
		sym := func(name, kind string, body *sitter.Node) codeindex.Symbol {
			return codeindex.Symbol{
				Name: name, Kind: kind, File: rel,
				Line:      int(outer.StartPosition().Row) + 1,
				EndLine:   int(outer.EndPosition().Row) + 1,
				Signature: signature(outer, body, src),
			}
		}
		switch c.Kind() {
		case "function_declaration", "generator_function_declaration", "function_signature":
			if name := c.ChildByFieldName("name"); name != nil {
				*out = append(*out, sym(name.Utf8Text(src), codeindex.KindFunc, c.ChildByFieldName("body")))
			}
		case "class_declaration", "abstract_class_declaration", "class":
			name := c.ChildByFieldName("name")
			body := c.ChildByFieldName("body")
			if name == nil {
				continue
			}
			cls := name.Utf8Text(src)
			*out = append(*out, sym(cls, codeindex.KindStruct, body))
			if body != nil {
				methods(body, cls, rel, src, out)
			}
		case "interface_declaration":
			if name := c.ChildByFieldName("name"); name != nil {
				*out = append(*out, sym(name.Utf8Text(src), codeindex.KindInterface, c.ChildByFieldName("body")))
			}
		case "type_alias_declaration", "enum_declaration":
			if name := c.ChildByFieldName("name"); name != nil {
				*out = append(*out, sym(name.Utf8Text(src), codeindex.KindType, c.ChildByFieldName("value")))
			}
		case "lexical_declaration", "variable_declaration":
			for j := uint(0); j < c.NamedChildCount(); j++ {
				v := c.NamedChild(j)
				if v == nil || v.Kind() != "variable_declarator" {
					continue
				}
				name, value := v.ChildByFieldName("name"), v.ChildByFieldName("value")
				if name == nil || value == nil || name.Kind() != "identifier" {
					continue
				}
				switch value.Kind() {
				case "arrow_function", "function_expression", "function", "generator_function":
					*out = append(*out, sym(name.Utf8Text(src), codeindex.KindFunc, value.ChildByFieldName("body")))
				}
			}
		case "internal_module", "module":
			if body := c.ChildByFieldName("body"); body != nil {
				walkDecls(body, rel, src, out)
			}
		case "expression_statement":
			// namespace Foo { ... } parses as an expression statement in
			// TypeScript's grammar.
			for j := uint(0); j < c.NamedChildCount(); j++ {
				if m := c.NamedChild(j); m != nil && m.Kind() == "internal_module" {
					if body := m.ChildByFieldName("body"); body != nil {
						walkDecls(body, rel, src, out)
					}
				}
			}
		}
	}
}

// methods adds a class body's methods to out.
func methods(body *sitter.Node, cls, rel string, src []byte, out *[]codeindex.Symbol) {
	for i := uint(0); i < body.NamedChildCount(); i++ {
		m := body.NamedChild(i)
		if m == nil {
			continue
		}
		switch m.Kind() {
		case "method_definition", "method_signature", "abstract_method_signature":
		default:
			continue
		}
		name := m.ChildByFieldName("name")
		if name == nil {
			continue
		}
		*out = append(*out, codeindex.Symbol{
			Name: name.Utf8Text(src), Receiver: cls, Kind: codeindex.KindMethod, File: rel,
			Line:      int(m.StartPosition().Row) + 1,
			EndLine:   int(m.EndPosition().Row) + 1,
			Signature: signature(m, m.ChildByFieldName("body"), src),
		})
	}
}

// maxSignature bounds a signature's characters.
const maxSignature = 300

// signature is a declaration's head as written, up to its body: "export
// function total(prices: number[], rate: number): number", "class Cart
// extends Base", blanks collapsed.
func signature(n, body *sitter.Node, src []byte) string {
	end := n.EndByte()
	if body != nil && body.StartByte() > n.StartByte() {
		end = body.StartByte()
	}
	head := strings.Join(strings.Fields(string(src[n.StartByte():end])), " ")
	head = strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(head, "=>")), "=")
	head = strings.TrimSpace(head)
	if r := []rune(head); len(r) > maxSignature {
		head = string(r[:maxSignature]) + "…"
	}
	return head
}
