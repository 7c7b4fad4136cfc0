package clip

import (
	"strings"
	"testing"
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
