package codeindex

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"

	"github.com/redfix/redfix/pkg/untrusted"
)

// MaxFileSize is the largest file indexed: a larger one (generated code, or
// a file a test wrote to exhaust the bot's memory) is left out.
const MaxFileSize = 2 << 20

// parse reads the file rel beneath the index's root, through no link, sized
// before it is read, and returns its declarations.
func (ix *Index) parse(rel string) ([]Symbol, error) {
	src, err := untrusted.ReadFile(ix.dir, rel, MaxFileSize)
	if errors.Is(err, untrusted.ErrTooLarge) || errors.Is(err, untrusted.ErrLink) || errors.Is(err, untrusted.ErrNotRegular) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ix.parser.Parse(rel, src), nil
}

// parseGo is GoParser's Parse: go/ast's declarations of a Go file.
func parseGo(rel string, src []byte) []Symbol {
	fset := token.NewFileSet()
	// A partial tree is still worth indexing: a file being edited may not
	// parse.
	f, _ := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	var out []Symbol
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
			s := Symbol{Name: d.Name.Name, Kind: KindFunc, File: rel, Line: line(d.Pos()), EndLine: line(d.End())}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind = KindMethod
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
				s := Symbol{Name: ts.Name.Name, Kind: KindType, File: rel, Line: line(ts.Pos()), EndLine: line(ts.End())}
				if len(d.Specs) == 1 && !d.Lparen.IsValid() {
					s.Line = line(d.Pos())
				}
				head := ts.Type.Pos()
				switch t := ts.Type.(type) {
				case *ast.StructType:
					s.Kind, head = KindStruct, t.Fields.Opening
				case *ast.InterfaceType:
					s.Kind, head = KindInterface, t.Methods.Opening
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
