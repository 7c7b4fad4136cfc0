package codesearch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func tree(t *testing.T, files map[string]string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, rel)
	}
	// The order given is the order returned.
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if names[j] < names[i] {
				names[i], names[j] = names[j], names[i]
			}
		}
	}
	return dir, names
}

func summary(hits []Hits) []string {
	var out []string
	for _, h := range hits {
		for i, n := range h.Lines {
			out = append(out, fmt.Sprintf("%s:%d:%s", h.File, n, h.Texts[i]))
		}
	}
	return out
}

func TestSearch(t *testing.T) {
	big := strings.Repeat("x", MaxFileSize) + "\nParseDuration\n"
	dir, files := tree(t, map[string]string{
		"a/a.go":      "package a\n\nfunc ParseDuration(s string) {}\r\n// parseduration in a comment\n",
		"a/a_test.go": "package a\n\n// ParseDuration is tested\nvar x = ParseDuration\n",
		"b/b.txt":     "PARSEDURATION shouted\nno match here",
		"bin/x.bin":   "ParseDuration\x00binary",
		"big.txt":     big,
		"c/c.go":      "package c\n\n// Parse the duration.\nfunc parse_duration() {}\n",
	})
	files = append(files, "gone.go") // listed but vanished: skipped
	ctx := context.Background()

	hits, tier, err := Search(ctx, dir, files, []Pattern{Literal("ParseDuration", false), Literal("ParseDuration", true)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/a.go:3:func ParseDuration(s string) {}", "a/a_test.go:3:// ParseDuration is tested", "a/a_test.go:4:var x = ParseDuration"}
	if got := summary(hits); tier != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("exact: tier %d, %q; want 0, %q", tier, got, want)
	}

	// The exact pattern misses; the folded one is the answer, in one pass.
	hits, tier, err = Search(ctx, dir, files, []Pattern{Literal("parseDURATION", false), Literal("parseDURATION", true)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"a/a.go:3:func ParseDuration(s string) {}", "a/a.go:4:// parseduration in a comment", "a/a_test.go:3:// ParseDuration is tested", "a/a_test.go:4:var x = ParseDuration", "b/b.txt:1:PARSEDURATION shouted"}
	if got := summary(hits); tier != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("folded: tier %d, %q; want 1, %q", tier, got, want)
	}

	re, err := Regexp(`func \w+_duration\(`, false)
	if err != nil {
		t.Fatal(err)
	}
	hits, tier, err = Search(ctx, dir, files, []Pattern{re}, Options{Clip: func(s string) string { return s[:10] }})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"c/c.go:4:func parse"}
	if got := summary(hits); tier != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("regex: tier %d, %q; want 0, %q", tier, got, want)
	}

	hits, tier, err = Search(ctx, dir, files, []Pattern{Literal("nowhere at all", true)}, Options{})
	if err != nil || tier != -1 || hits != nil {
		t.Errorf("miss: %v, %d, %v", hits, tier, err)
	}

	if _, err := Regexp(`(unclosed`, false); err == nil {
		t.Error("a bad expression compiles")
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Search(cctx, dir, files, []Pattern{Literal("x", false)}, Options{}); err == nil {
		t.Error("a cancelled search reports no error")
	}
}

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		expr   string
		lits   string
		folded bool
	}{
		{`func \w+Duration\(`, "Duration(|func ", false},
		{`(?i)parse.*duration`, "duration|parse", true},
		{`a|b`, "", false},
		{`(Parse)x*`, "Parse", false},
		{`[ab]+`, "", false},
	} {
		lits, folded := required(c.expr)
		if strings.Join(lits, "|") != c.lits || folded != c.folded {
			t.Errorf("required(%q) = %q, %v; want %q, %v", c.expr, lits, folded, c.lits, c.folded)
		}
	}
}

func TestAppendLower(t *testing.T) {
	var all []byte
	for c := 0; c < 256; c++ {
		all = append(all, byte(c))
	}
	for _, src := range [][]byte{all, []byte("Hello, WORLD! ÀÉ zZ@[`{"), nil, []byte("ABC")} {
		got := appendLower([]byte("x"), src)
		want := append([]byte("x"), src...)
		for i, c := range want {
			if 'A' <= c && c <= 'Z' {
				want[i] = c + 'a' - 'A'
			}
		}
		if string(got) != string(want) {
			t.Errorf("appendLower(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		line, q string
		want    bool
	}{
		{"Hello World", "world", true},
		{"Hello World", "worlds", false},
		{"", "a", false},
		{"abc", "", true},
		{"x_Y", "x_y", true},
	} {
		if got := containsFold([]byte(c.line), []byte(c.q)); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.line, c.q, got)
		}
	}
	// Non-ASCII queries fold through the regexp package.
	p := Literal("ÉTÉ", true)
	if !p.line([]byte("un été chaud")) {
		t.Error("a folded non-ASCII literal misses")
	}
}
