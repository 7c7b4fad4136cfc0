package tools

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseBlocks(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []Block
		wantErr string
	}{
		{
			name: "one block",
			text: "<<<<<<< SEARCH\n\treturn a - b\n=======\n\treturn a + b\n>>>>>>> REPLACE\n",
			want: []Block{{Search: "\treturn a - b\n", Replace: "\treturn a + b\n"}},
		},
		{
			name: "two blocks with prose, a file name and fences around",
			text: "Fix the sign.\n\ncalc/calc.go\n```go\n<<<<<<< SEARCH\nx := 1\n=======\nx := 2\n>>>>>>> REPLACE\n```\n\n```go\n<<<<<<< SEARCH\ny\nz\n=======\n>>>>>>> REPLACE\n```\n",
			want: []Block{{Search: "x := 1\n", Replace: "x := 2\n"}, {Search: "y\nz\n", Replace: ""}},
		},
		{
			name: "empty search creates",
			text: "<<<<<<< SEARCH\n=======\npackage x\n>>>>>>> REPLACE",
			want: []Block{{Search: "", Replace: "package x\n"}},
		},
		{
			name: "CRLF and longer markers",
			text: "<<<<<<<< SEARCH\r\na\r\n========\r\nb\r\n>>>>>>>> REPLACE\r\n",
			want: []Block{{Search: "a\n", Replace: "b\n"}},
		},
		{name: "no block", text: "just prose", wantErr: "no SEARCH/REPLACE block"},
		{name: "unterminated", text: "<<<<<<< SEARCH\na\n=======\nb\n", wantErr: "does not end with >>>>>>> REPLACE"},
		{name: "no divider", text: "<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", wantErr: "before the ======= divider"},
		{name: "stray divider", text: "a\n=======\nb\n", wantErr: "outside a block"},
		{name: "nested search", text: "<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n", wantErr: "new SEARCH starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBlocks(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseBlocks error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseBlocks = %#v, want %#v", got, tt.want)
			}
		})
	}
}

const calcSrc = `package calc

func Add(a, b int) int {
	return a - b
}

func Sub(a, b int) int {
	return a - b
}
`

func TestApplyBlocks(t *testing.T) {
	tests := []struct {
		name    string
		content string
		blocks  []Block
		want    string
		wantErr []string
	}{
		{
			name:    "exact",
			content: calcSrc,
			blocks:  []Block{{Search: "func Add(a, b int) int {\n\treturn a - b\n", Replace: "func Add(a, b int) int {\n\treturn a + b\n"}},
			want:    strings.Replace(calcSrc, "Add(a, b int) int {\n\treturn a - b", "Add(a, b int) int {\n\treturn a + b", 1),
		},
		{
			name:    "ambiguous",
			content: calcSrc,
			blocks:  []Block{{Search: "\treturn a - b\n", Replace: "\treturn a + b\n"}},
			wantErr: []string{"block 1 of 1", "matches 2 places", "lines 4, 8"},
		},
		{
			name:    "missing shows the nearest lines",
			content: calcSrc,
			blocks:  []Block{{Search: "func Add(a, b int) int {\n\treturn a * b\n}\n", Replace: "x\n"}},
			wantErr: []string{"block 1 of 1", "does not match", "nearest lines", "     3\tfunc Add(a, b int) int {"},
		},
		{
			name:    "second block names itself",
			content: calcSrc,
			blocks: []Block{
				{Search: "func Add(a, b int) int {\n", Replace: "func Add(a, b int) int { // sum\n"},
				{Search: "func Mul(", Replace: "x"},
			},
			wantErr: []string{"block 2 of 2", "does not match"},
		},
		{
			name:    "whitespace fallback re-indents",
			content: calcSrc,
			blocks:  []Block{{Search: "func Sub(a, b int) int {\nreturn a - b   \n}\n", Replace: "func Sub(a, b int) int {\n\treturn b - a\n}\n"}},
			want:    strings.Replace(calcSrc, "Sub(a, b int) int {\n\treturn a - b", "Sub(a, b int) int {\n\treturn b - a", 1),
		},
		{
			name:    "fallback adds the file's extra indentation",
			content: "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			blocks:  []Block{{Search: "if x {\n\ty()\n}\n", Replace: "if x {\n\ty()\n\tz()\n}\n"}},
			want:    "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n",
		},
		{
			name:    "fallback ambiguous",
			content: "a\n  b\nc\n    b\n",
			blocks:  []Block{{Search: "b\n", Replace: "B\n"}},
			wantErr: []string{"matches 2 places when indentation is ignored", "lines 2, 4"},
		},
		{
			name:    "last line without newline",
			content: "a\nb",
			blocks:  []Block{{Search: "b\n", Replace: "c\n"}},
			want:    "a\nc",
		},
		{
			name:    "create file",
			content: "",
			blocks:  []Block{{Search: "", Replace: "package x\n"}},
			want:    "package x\n",
		},
		{
			name:    "empty search appends",
			content: "package x",
			blocks:  []Block{{Search: "", Replace: "func F() {}\n"}},
			want:    "package x\nfunc F() {}\n",
		},
		{
			name:    "blocks apply in order",
			content: "one\ntwo\n",
			blocks:  []Block{{Search: "one\n", Replace: "three\n"}, {Search: "three\ntwo\n", Replace: "done\n"}},
			want:    "done\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyBlocks(tt.content, tt.blocks)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ApplyBlocks = %q, want an error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("ApplyBlocks =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
