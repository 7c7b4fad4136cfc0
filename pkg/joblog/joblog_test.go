package joblog

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// GitHub's decorations go: the timestamps (the first after a byte-order
// mark), the workflow commands (empty lines in their place), the colours
// and the carriage returns of CRLF endings.
func TestLinesGitHub(t *testing.T) {
	log := "\ufeff2026-11-20T10:00:00.0000000Z ##[group]Run the tests\r\n" +
		"2026-11-20T10:00:01.1234567Z \x1b[31mFAIL\x1b[39m a/b.x\r\n" +
		"2026-11-20T10:00:02.0000000Z   ● one › two\r\n" +
		"2026-11-20T10:00:03.0000000Z ##[endgroup]\n" +
		"2026-11-20T10:00:04.0000000Z ##[error]Process completed with exit code 1.\n"
	got := Lines([]byte(log))
	want := []string{"", "FAIL a/b.x", "  ● one › two", "", ""}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// GitLab's section markers, its erase-line escapes and a progress line a
// carriage return rewrote: the line as the terminal showed it last.
func TestLinesGitLab(t *testing.T) {
	log := "\x1b[0Ksection_start:1764580000:step_script\r\x1b[0K\x1b[0K\x1b[36;1m$ run tests\x1b[0;m\n" +
		"collecting ... 10%\rcollecting ... 100%\n" +
		"\x1b[1m\x1b[31mFAILED\x1b[0m x::y\n" +
		"section_end:1764580010:step_script\r\x1b[0K\n"
	got := Lines([]byte(log))
	want := []string{"$ run tests", "collecting ... 100%", "FAILED x::y", ""}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// A hostile log stays bounded: a huge line is cut, millions of lines are
// read from their end, MaxLines of them.
func TestLinesBounded(t *testing.T) {
	huge := bytes.Repeat([]byte("\x1b[31mx"), 1<<20)
	got := Lines(append(huge, "\nlast\n"...))
	if len(got) != 2 || len(got[0]) > MaxLineBytes || got[1] != "last" {
		t.Errorf("a huge line: %d lines, first %d bytes", len(got), len(got[0]))
	}
	many := bytes.Repeat([]byte("l\n"), 3*MaxLines)
	many = append(many, "end"...)
	got = Lines(many)
	if len(got) != MaxLines || got[len(got)-1] != "end" {
		t.Errorf("%d lines kept (last %q), want %d ending with the log's last", len(got), got[len(got)-1], MaxLines)
	}
}

func TestSafeName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"tests/test_x.py::TestC::test_y[p]", true},
		{"src/a.test.ts", true},
		{"example.com/m/calc.TestAdd/one", true},
		{"", false},
		{"/etc/passwd", false},
		{"../../etc/passwd", false},
		{"a/../../b", false},
		{`a\..\b`, false},
		{"a\x1b[31mb", false},
		{strings.Repeat("a", MaxName+1), false},
	} {
		if got := SafeName(c.name); got != c.ok {
			t.Errorf("SafeName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
}

type reader string

func (r reader) ReadConsole(lines []string) []byte {
	for _, l := range lines {
		if l == string(r) {
			return []byte("<testsuites/>")
		}
	}
	return nil
}

// Of keeps the drivers that read consoles; Reports asks each of them.
func TestReaders(t *testing.T) {
	rs := Of([]any{reader("a"), 42, reader("b")})
	if len(rs) != 2 {
		t.Fatalf("%d readers, want 2", len(rs))
	}
	if got := rs.Reports([]byte("x\nb\n")); len(got) != 1 {
		t.Errorf("%d reports, want the one reader that found its runner's lines", len(got))
	}
	if got := rs.Reports([]byte("x\n")); got != nil {
		t.Errorf("a log with no runner's output: %q", got)
	}
	if got := Readers(nil).Reports([]byte("a\n")); got != nil {
		t.Errorf("no readers: %q", got)
	}
}

// Terminal escapes go, whatever their kind: colours, erasing, a hyperlink
// (an operating system command ended by BEL or by ESC \), a two-byte
// escape, one cut short at the line's end.
func TestStripEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[1m\x1b[31mFAIL\x1b[39m\x1b[22m x":               "FAIL x",
		"\x1b[0Kdone\x1b[?25h":                                "done",
		"\x1b]8;;https://example.com\x07link\x1b]8;;\x07 end": "link end",
		"\x1b]0;title\x1b\\text":                              "text",
		"a\x1bMb":                                             "ab",
		"cut\x1b[31":                                          "cut",
		"cut\x1b":                                             "cut",
	} {
		if got := stripEscapes(in); got != want {
			t.Errorf("stripEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}
