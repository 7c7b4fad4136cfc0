package lang

import (
	"strings"
	"testing"
)

// suffixDriver takes the files ending in its suffix for tests; the rest of
// the Driver it does not have (calling it panics).
type suffixDriver struct {
	Driver
	name, suffix string
}

func (d suffixDriver) Name() string               { return d.name }
func (d suffixDriver) IsTestFile(rel string) bool { return strings.HasSuffix(rel, d.suffix) }

// A file is a test's to the drivers when it is to any of them.
func TestDriversIsTestFile(t *testing.T) {
	d := New(suffixDriver{name: "a", suffix: "_a.txt"}, suffixDriver{name: "b", suffix: ".b"})
	for rel, want := range map[string]bool{
		"x/y_a.txt": true, "x/y.b": true, "x/y.c": false, "x/y_a.b.txt": false,
	} {
		if got := d.IsTestFile(rel); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", rel, got, want)
		}
	}
	if New().IsTestFile("x/y_a.txt") {
		t.Error("no driver takes a file for a test's, yet one is")
	}
}
