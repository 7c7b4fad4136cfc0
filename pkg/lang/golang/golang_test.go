package golang

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/redfix/redfix/pkg/lang"
)

var _ lang.Driver = Driver{}

// The seam picks the Go driver for a module, and says so plainly for a
// repository no driver knows.
func TestDetectAndChoose(t *testing.T) {
	mod := t.TempDir()
	write := func(dir, name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(mod, "go.mod", "module example.com/m\n\ngo 1.22\n")
	write(mod, "a/a.go", "package a\n\nfunc A() int { return 1 }\n")
	other := t.TempDir()
	write(other, "README", "no code\n")

	ds := lang.New(Driver{})
	d, err := ds.For("example.com/m", mod)
	if err != nil || d.Name() != "go" {
		t.Fatalf("For(module) = %v, %v", d, err)
	}
	if _, err := ds.For("example.com/other", other); err == nil {
		t.Fatal("a repository with no Go was given a driver")
	}
	if err := ds.Override("*/forced", "go"); err != nil {
		t.Fatal(err)
	}
	if d, err := ds.For("example.com/forced", other); err != nil || d.Name() != "go" {
		t.Fatalf("an override was not taken: %v, %v", d, err)
	}
	if err := ds.Override("*", "cobol"); err == nil {
		t.Fatal("an override naming an unknown driver was taken")
	}

	if pkg, ok := (Driver{}).PackageOf(mod, "a/a.go"); !ok || pkg != "./a" {
		t.Errorf("PackageOf(a/a.go) = %q, %v", pkg, ok)
	}
	for _, rel := range []string{"a/testdata/x.go", "vendor/v/v.go", "a/README.md"} {
		if pkg, ok := (Driver{}).PackageOf(mod, rel); ok {
			t.Errorf("PackageOf(%s) = %q", rel, pkg)
		}
	}
	write(mod, "a/b.go", "package a\n\nfunc B() int { return undefined }\n")
	fs, err := (Driver{}).Check(context.Background(), mod, []string{"a/b.go"})
	if err != nil || len(fs) == 0 {
		t.Fatalf("Check of a file that does not build: %v, %v", fs, err)
	}
	ix, err := (Driver{}).Index(mod)
	if err != nil || len(ix.FindFuncs("A")) != 1 {
		t.Fatalf("Index: %v", err)
	}
}
