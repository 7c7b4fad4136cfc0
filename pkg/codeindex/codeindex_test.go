package codeindex_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/pkg/codeindex"
	"github.com/redfix/redfix/pkg/lang/golang"
)

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const shapes = `package shapes

// Shape has an area.
type Shape interface {
	Area() float64
}

type (
	Point struct{ X, Y int }
	Name  = string
)

type Rect struct {
	W, H float64
}

func (r *Rect) Area() float64 {
	return r.W * r.H
}

func (r Rect) Scale(k float64) Rect { return Rect{r.W * k, r.H * k} }

type List[T any] []T

func (l List[T]) Len() int { return len(l) }

func New(w, h float64) *Rect {
	return &Rect{W: w, H: h}
}
`

func TestIndex(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/m\n\ngo 1.21\n")
	write(t, dir, "shapes/shapes.go", shapes)
	write(t, dir, "shapes/shapes_test.go", "package shapes\n\nimport \"testing\"\n\nfunc New2() {}\n\nfunc TestArea(t *testing.T) {}\n")
	write(t, dir, "vendor/v/v.go", "package v\n\nfunc New() {}\n")
	write(t, dir, "testdata/x.go", "package x\n\nfunc New() {}\n")
	write(t, dir, ".hidden/h.go", "package h\n\nfunc New() {}\n")

	ix, err := codeindex.BuildWith(dir, golang.IndexParser)
	if err != nil {
		t.Fatal(err)
	}

	types := ix.FindTypes("Rect")
	if len(types) != 1 || types[0].Kind != codeindex.KindStruct || types[0].Line != 13 || types[0].EndLine != 15 || types[0].File != "shapes/shapes.go" {
		t.Fatalf("FindTypes(Rect) = %+v", types)
	}
	if got := types[0].Signature; got != "type Rect struct" {
		t.Errorf("Rect signature = %q", got)
	}
	if s := ix.FindTypes("Shape"); len(s) != 1 || s[0].Kind != codeindex.KindInterface {
		t.Errorf("FindTypes(Shape) = %+v", s)
	}
	if s := ix.FindTypes("point"); len(s) != 1 || s[0].Name != "Point" || s[0].Line != 9 {
		t.Errorf("FindTypes(point) (case-insensitive fallback) = %+v", s)
	}
	if s := ix.FindTypes("Name"); len(s) != 1 || s[0].Kind != codeindex.KindType {
		t.Errorf("FindTypes(Name) = %+v", s)
	}

	fs := ix.FindFuncs("New")
	if len(fs) != 1 || fs[0].Kind != codeindex.KindFunc || fs[0].Line != 27 || fs[0].EndLine != 29 {
		t.Fatalf("FindFuncs(New) = %+v (vendor, testdata and hidden dirs must be skipped)", fs)
	}
	if got := fs[0].Signature; got != "func New(w, h float64) *Rect" {
		t.Errorf("New signature = %q", got)
	}
	area := ix.FindFuncs("Area")
	if len(area) != 1 || area[0].Receiver != "Rect" || area[0].Kind != codeindex.KindMethod || area[0].Signature != "func (r *Rect) Area() float64" {
		t.Fatalf("FindFuncs(Area) = %+v", area)
	}
	if m := ix.FindFuncs("Rect.Scale"); len(m) != 1 || m[0].Line != 21 {
		t.Errorf("FindFuncs(Rect.Scale) = %+v", m)
	}
	if m := ix.FindMethod("*Rect", "Area"); len(m) != 1 {
		t.Errorf("FindMethod(*Rect, Area) = %+v", m)
	}
	if m := ix.FindMethod("List", "Len"); len(m) != 1 || m[0].Receiver != "List" {
		t.Errorf("FindMethod(List, Len) (generic receiver) = %+v", m)
	}
	if m := ix.FindMethod("Point", "Area"); len(m) != 0 {
		t.Errorf("FindMethod(Point, Area) = %+v, want none", m)
	}
	if m := ix.MethodsOf("Rect"); len(m) != 2 {
		t.Errorf("MethodsOf(Rect) = %+v", m)
	}
	if f := ix.FuncsInFile("shapes/shapes_test.go"); len(f) != 2 || f[0].Name != "New2" || f[1].Name != "TestArea" {
		t.Errorf("FuncsInFile = %+v", f)
	}
	if s := ix.Similar("Ne", codeindex.KindFunc, 5); len(s) != 2 || s[0].Name != "New" {
		t.Errorf("Similar(Ne) = %+v", s)
	}
	// Names the query holds (three characters or more) are like it too.
	if s := ix.Similar("MakeNewRects", codeindex.KindFunc, 5); len(s) != 1 || s[0].Name != "New" {
		t.Errorf("Similar(MakeNewRects) = %+v", s)
	}
	if s := ix.Similar("shapes.rect", codeindex.KindType, 5); len(s) != 1 || s[0].Name != "Rect" {
		t.Errorf("Similar(shapes.rect) = %+v", s)
	}
}

func TestRefreshFollowsEdits(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.go", "package a\n\nfunc Old() {}\n")
	write(t, dir, "b.go", "package a\n\nfunc Gone() {}\n")
	ix, err := codeindex.BuildWith(dir, golang.IndexParser)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.go", "package a\n\n// doc\nfunc Renamed() {}\n")
	write(t, dir, "c.go", "package a\n\nfunc Added( {\n") // does not parse
	if err := os.Remove(filepath.Join(dir, "b.go")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Refresh(); err != nil {
		t.Fatal(err)
	}
	if s := ix.FindFuncs("Old"); len(s) != 0 {
		t.Errorf("Old still indexed: %+v", s)
	}
	if s := ix.FindFuncs("Renamed"); len(s) != 1 || s[0].Line != 4 {
		t.Errorf("Renamed = %+v", s)
	}
	if s := ix.FindFuncs("Gone"); len(s) != 0 {
		t.Errorf("Gone still indexed: %+v", s)
	}
	if s := ix.FindFuncs("Added"); len(s) != 1 {
		t.Errorf("a file that does not parse is indexed as far as it goes: %+v", s)
	}

	write(t, dir, "d.go", "package a\n\nfunc Fresh() {}\n")
	if err := ix.Reload("d.go"); err != nil {
		t.Fatal(err)
	}
	if s := ix.FindFuncs("Fresh"); len(s) != 1 {
		t.Errorf("Fresh after Reload = %+v", s)
	}
	if err := os.Remove(filepath.Join(dir, "d.go")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Reload("d.go"); err != nil {
		t.Fatal(err)
	}
	if s := ix.FindFuncs("Fresh"); len(s) != 0 {
		t.Errorf("Fresh after removal = %+v", s)
	}

	// The name maps follow Reload: a method's receiver, a renamed type.
	write(t, dir, "e.go", "package a\n\ntype Box struct{}\n\nfunc (b *Box) Open() {}\n")
	if err := ix.Reload("e.go"); err != nil {
		t.Fatal(err)
	}
	if m := ix.MethodsOf("Box"); len(m) != 1 || m[0].Name != "Open" {
		t.Errorf("MethodsOf(Box) = %+v", m)
	}
	write(t, dir, "e.go", "package a\n\ntype Crate struct{}\n\nfunc (c Crate) Open() {}\n")
	if err := ix.Reload("e.go"); err != nil {
		t.Fatal(err)
	}
	if m := ix.MethodsOf("Box"); len(m) != 0 {
		t.Errorf("MethodsOf(Box) after the rename = %+v", m)
	}
	if m := ix.FindFuncs("crate.open"); len(m) != 1 || m[0].Receiver != "Crate" {
		t.Errorf("FindFuncs(crate.open) = %+v", m)
	}
	if s := ix.Similar("Bo", "", 5); len(s) != 0 {
		t.Errorf("Similar(Bo) after the rename = %+v", s)
	}
	if s := ix.Similar("Crat", codeindex.KindType, 5); len(s) != 1 || s[0].Name != "Crate" {
		t.Errorf("Similar(Crat) = %+v", s)
	}
	if n := ix.Len(); n != 4 {
		t.Errorf("Len = %d, want 4 (Renamed, Added, Crate, Open)", n)
	}
}
