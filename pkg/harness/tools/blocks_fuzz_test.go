package tools

import (
	"reflect"
	"strings"
	"testing"
)

// render writes blocks back in the format ParseBlocks reads.
func render(blocks []Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString("<<<<<<< SEARCH\n")
		b.WriteString(bl.Search)
		b.WriteString("=======\n")
		b.WriteString(bl.Replace)
		b.WriteString(">>>>>>> REPLACE\n")
	}
	return b.String()
}

// FuzzParseBlocks: ParseBlocks never panics; what it returns is well formed
// (each side empty or whole lines) and survives being written back and read
// again unchanged.
func FuzzParseBlocks(f *testing.F) {
	for _, s := range []string{
		"<<<<<<< SEARCH\n\treturn a - b\n=======\n\treturn a + b\n>>>>>>> REPLACE\n",
		"Fix.\n```go\n<<<<<<< SEARCH\nx := 1\n=======\nx := 2\n>>>>>>> REPLACE\n```\n<<<<<<< SEARCH\ny\n=======\n>>>>>>> REPLACE",
		"<<<<<<<< SEARCH\r\na\r\n========\r\nb\r\n=======\r\n>>>>>>>> REPLACE\r\n",
		"<<<<<<< SEARCH\n\n=======\n\n>>>>>>> REPLACE\n",
		"<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n",
		"a\n=======\nb\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		blocks, err := ParseBlocks(text)
		if err != nil {
			if blocks != nil {
				t.Fatalf("an error with blocks: %v %q", err, blocks)
			}
			return
		}
		if len(blocks) == 0 {
			t.Fatal("no error and no block")
		}
		for i, b := range blocks {
			for side, s := range map[string]string{"search": b.Search, "replace": b.Replace} {
				if s != "" && !strings.HasSuffix(s, "\n") {
					t.Fatalf("block %d %s %q does not end with a newline", i, side, s)
				}
				if strings.Contains(s, "\r\n") {
					t.Fatalf("block %d %s %q keeps a CRLF", i, side, s)
				}
			}
		}
		again, err := ParseBlocks(render(blocks))
		if err != nil {
			t.Fatalf("written back, the blocks do not parse: %v\n%q", err, render(blocks))
		}
		if !reflect.DeepEqual(again, blocks) {
			t.Fatalf("round trip changed the blocks:\n%q\n%q", blocks, again)
		}
	})
}

// FuzzApplyBlocks: ApplyBlocks never panics; a SEARCH made of whole lines
// of the file is always found; a unique exact match is replaced in place;
// and undoing the edit with the reverse block gives the file back.
func FuzzApplyBlocks(f *testing.F) {
	f.Add("package m\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n", uint8(3), uint8(1), "\treturn a + b\n")
	f.Add("a\nb\na\nb\n", uint8(0), uint8(2), "c\n")
	f.Add("x\n  y\nz", uint8(1), uint8(2), "  w\n")
	f.Add("", uint8(0), uint8(0), "new\n")
	f.Fuzz(func(t *testing.T, content string, from, n uint8, replace string) {
		lines := strings.SplitAfter(content, "\n")
		start := min(int(from), len(lines))
		end := min(start+int(n), len(lines))
		search := strings.Join(lines[start:end], "")
		if search != "" && !strings.HasSuffix(search, "\n") {
			search += "\n"
		}
		if replace != "" && !strings.HasSuffix(replace, "\n") {
			replace += "\n"
		}
		b := Block{Search: search, Replace: replace}
		out, err := ApplyBlocks(content, []Block{b})
		if strings.TrimSpace(search) == "" {
			if err != nil {
				t.Fatalf("an empty SEARCH appends, yet: %v", err)
			}
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "does not match") {
				t.Fatalf("lines %d..%d of the file were not found: %v", start, end, err)
			}
			return // ambiguous: refused, as it must be
		}
		at := exactMatches(content, search)
		if len(at) != 1 {
			return // matched ignoring indentation
		}
		if want := content[:at[0]] + replace + content[at[0]+len(search):]; out != want {
			t.Fatalf("exact replacement:\n got %q\nwant %q", out, want)
		}
		if strings.TrimSpace(replace) == "" || len(exactMatches(out, replace)) != 1 || len(exactMatches(content, replace)) > 0 {
			return
		}
		back, err := ApplyBlocks(out, []Block{{Search: replace, Replace: search}})
		if err != nil {
			t.Fatalf("the reverse block fails: %v", err)
		}
		if back != content {
			t.Fatalf("undo does not give the file back:\n got %q\nwant %q", back, content)
		}
	})
}
