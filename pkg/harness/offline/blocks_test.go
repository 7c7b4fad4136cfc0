package offline

import (
	"fmt"
	"strings"
	"testing"
)

func TestMakeBlockUnique(t *testing.T) {
	lines := []string{"func a() {", "\tx++", "}", "", "func b() {", "\tx++", "}"}
	search, replace, ok := makeBlock(lines, change{start: 6, end: 6, repl: []string{"\tx--"}})
	if !ok {
		t.Fatal("no block")
	}
	if strings.Join(search, "\n") != "func b() {\n\tx++" || strings.Join(replace, "\n") != "func b() {\n\tx--" {
		t.Errorf("search %q replace %q", search, replace)
	}
	// A line that is a substring of another one needs context too.
	lines = []string{"\tif a {", "\t\tif a {", "\t\t}", "\t}"}
	search, _, ok = makeBlock(lines, change{start: 1, end: 1, repl: []string{"\tif !a {"}})
	if !ok || len(search) < 2 {
		t.Errorf("search = %q, %v", search, ok)
	}
}

func TestBlocksInverse(t *testing.T) {
	lines := strings.Split("package p\n\nfunc f(a, b int) int {\n\tc := a + b\n\treturn c * 2\n}\n\nfunc g() int { return 1 }", "\n")
	changes := []change{{start: 4, end: 4, repl: []string{"\tc := a - b", "\tc++"}}, {start: 7, end: 8, repl: nil}}
	fwd, inv, after, ok := blocks(lines, changes)
	if !ok {
		t.Fatal("no blocks")
	}
	if got := applyBlocks(t, lines, fwd); strings.Join(got, "\n") != strings.Join(after, "\n") {
		t.Fatalf("forward gives %q, want %q", got, after)
	}
	if got := applyBlocks(t, after, inv); strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Fatalf("inverse gives %q, want %q", got, lines)
	}
}

// applyBlocks applies SEARCH/REPLACE text the way a patcher does: each
// SEARCH must occur once.
func applyBlocks(t *testing.T, lines []string, blocks string) []string {
	t.Helper()
	content := strings.Join(lines, "\n") + "\n"
	out, err := applyBlockText(content, blocks)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

func applyBlockText(content, blocks string) (string, error) {
	parts := strings.Split(blocks, "<<<<<<< SEARCH\n")
	for _, p := range parts[1:] {
		search, rest, ok := strings.Cut(p, "=======\n")
		if !ok {
			return "", fmt.Errorf("malformed block %q", p)
		}
		replace, _, ok := strings.Cut(rest, ">>>>>>> REPLACE")
		if !ok {
			return "", fmt.Errorf("malformed block %q", p)
		}
		if n := strings.Count(content, search); n != 1 {
			return "", fmt.Errorf("SEARCH occurs %d times: %q", n, search)
		}
		content = strings.Replace(content, search, replace, 1)
	}
	return content, nil
}
