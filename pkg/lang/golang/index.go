package golang

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"

	"github.com/redfix/redfix/pkg/codeindex"
)

// IndexParser indexes Go with go/ast (codeindex.Parser): .go files,
// outside hidden, "_"-prefixed, vendor and testdata directories; a
// _test.go file's declarations rank after the code's.
var IndexParser = codeindex.Parser{
	Source: func(rel string) bool { return strings.HasSuffix(rel, ".go") },
	SkipDir: func(name string) bool {
		return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor" || name == "testdata"
	},
	Parse:  declarations,
	IsTest: func(rel string) bool { return strings.HasSuffix(rel, "_test.go") },
}

// Index indexes the Go declarations with go/ast (IndexParser).
func (Driver) Index(dir string) (*codeindex.Index, error) {
	return codeindex.BuildWith(dir, IndexParser)
}

// declarations is IndexParser's Parse: go/ast's declarations of a Go
// file.
func declarations(rel string, src []byte) []codeindex.Symbol {
	fset := token.NewFileSet()
	// A partial tree is still worth indexing: a file being edited may not
	// parse.
	f, _ := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	var out []codeindex.Symbol
	line := func(p token.Pos) int { return fset.Position(p).Line }
	text := func(from, to token.Pos) string {
		a, b := fset.Position(from).Offset, fset.Position(to).Offset
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return strings.Join(strings.Fields(string(src[a:b])), " ")
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			s := codeindex.Symbol{Name: d.Name.Name, Kind: codeindex.KindFunc, File: rel, Line: line(d.Pos()), EndLine: line(d.End())}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind = codeindex.KindMethod
				s.Receiver = receiverName(d.Recv.List[0].Type)
			}
			end := d.End()
			if d.Body != nil {
				end = d.Body.Lbrace
			}
			s.Signature = text(d.Pos(), end)
			out = append(out, s)
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, spec := range d.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				s := codeindex.Symbol{Name: ts.Name.Name, Kind: codeindex.KindType, File: rel, Line: line(ts.Pos()), EndLine: line(ts.End())}
				if len(d.Specs) == 1 && !d.Lparen.IsValid() {
					s.Line = line(d.Pos())
				}
				head := ts.Type.Pos()
				switch t := ts.Type.(type) {
				case *ast.StructType:
					s.Kind, head = codeindex.KindStruct, t.Fields.Opening
				case *ast.InterfaceType:
					s.Kind, head = codeindex.KindInterface, t.Methods.Opening
				default:
					head = ts.End()
				}
				s.Signature = "type " + text(ts.Pos(), head)
				out = append(out, s)
			}
		}
	}
	return out
}

func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
