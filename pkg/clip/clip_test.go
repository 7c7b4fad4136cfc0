package clip

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMiddle(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("é", i%7))
		b.WriteString("\n")
	}
	s := b.String()
	got := Middle(s, 500)
	if n := len([]rune(got)); n > 500 {
		t.Fatalf("Middle kept %d characters, limit 500", n)
	}
	if !strings.HasPrefix(got, "line \nline é\n") || !strings.HasSuffix(got, s[len(s)-40:]) || !strings.Contains(got, "characters omitted") {
		t.Fatalf("Middle lost the head, the tail or the marker:\n%s", got)
	}
	if Middle("short", 500) != "short" {
		t.Fatal("a short text changed")
	}
}

// A text cut before Middle sees it gives what the whole text gives when
// the cut is in the part Middle leaves out.
func TestMiddleOfCutText(t *testing.T) {
	line := func(i int) string { return "line " + strings.Repeat("é", i%7) + strings.Repeat("x", i%11) + "\n" }
	var head, middle, tail strings.Builder
	for i := 0; i < 3000; i++ {
		switch {
		case i < 1000:
			head.WriteString(line(i))
		case i < 2000:
			middle.WriteString(line(i))
		default:
			tail.WriteString(line(i))
		}
	}
	whole := head.String() + middle.String() + tail.String()
	for _, limit := range []int{100, 500, 5000} {
		want := Middle(whole, limit)
		got := MiddleOf(head.String()+tail.String(), utf8.RuneCountInString(middle.String()), limit)
		if got != want {
			t.Errorf("limit %d: MiddleOf gave\n%q\nMiddle of the whole\n%q", limit, got, want)
		}
	}
	if got := MiddleOf("short", 3, 500); got != "short" {
		t.Errorf("a text within the limit changed: %q", got)
	}
}

// Kept names the bytes Middle keeps: its output is that head, the marker
// and that tail.
func TestKept(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		b.WriteString("ligne ")
		b.WriteString(strings.Repeat("é", i%5))
		b.WriteString("\n")
	}
	s := b.String()
	for _, limit := range []int{60, 500, 3000} {
		head, tail := Kept(s, limit)
		omitted := utf8.RuneCountInString(s[head : len(s)-tail])
		want := strings.TrimSuffix(s[:head], "\n") + fmt.Sprintf("\n[… %d characters omitted …]\n", omitted) + s[len(s)-tail:]
		if got := Middle(s, limit); got != want {
			t.Errorf("limit %d: Kept = %d, %d; Middle gave\n%q\nnot\n%q", limit, head, tail, got, want)
		}
	}
	if head, tail := Kept("short", 500); head != 5 || tail != 0 {
		t.Errorf("Kept of a short text = %d, %d", head, tail)
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"exit status 1", 20, "exit status 1"},
		{"  build failed:\n\tcalc.go:3: undefined: x\n", 100, "build failed: calc.go:3: undefined: x"},
		{"héllo wörld", 5, "héllo…"},
	} {
		if got := OneLine(c.in, c.n); got != c.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
