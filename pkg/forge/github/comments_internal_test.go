package github

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipComment(t *testing.T) {
	if got := clipComment("short"); got != "short" {
		t.Errorf("a short body was changed: %q", got)
	}
	long := strings.Repeat("é", MaxCommentRunes+10)
	got := clipComment(long)
	if n := utf8.RuneCountInString(got); n != MaxCommentRunes || !utf8.ValidString(got) || !strings.HasSuffix(got, "(clipped: GitHub takes at most 65536 characters)") {
		t.Errorf("clipped body: %d runes, valid %v, ends %q", n, utf8.ValidString(got), got[len(got)-60:])
	}
}
