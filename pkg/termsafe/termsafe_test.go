package termsafe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// obeyed says where s holds something a terminal would obey rather than
// print: a control character other than newline and tab (C0, DEL, C1 in
// UTF-8 or as a single byte), or a byte that is not UTF-8.
func obeyed(s string) error {
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			return fmt.Errorf("byte %#x at %d is not UTF-8", s[i], i)
		case r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r <= 0x9f:
			return fmt.Errorf("control %U at %d", r, i)
		}
		i += w
	}
	return nil
}

var cases = []struct{ name, in, want string }{
	{"OSC 52 clipboard, BEL", "before\x1b]52;c;ZWNobyBwd25lZA==\x07after", "beforeafter"},
	{"OSC 52 clipboard, ST", "\x1b]52;c;aGk=\x1b\\ok", "ok"},
	{"OSC 8 link", "\x1b]8;;http://evil.example/\x1b\\click me\x1b]8;;\x1b\\", "click me"},
	{"OSC title, aborted by ESC", "\x1b]0;title\x1b[31mred", "red"},
	{"OSC unterminated", "a\x1b]52;c;eA==", "a52;c;eA=="},
	{"CSI cursor moves", "ok\x1b[2A\x1b[1;1H\x1b[2Kfake PASS", "okfake PASS"},
	{"CSI colours", "\x1b[1;31mFAIL\x1b[0m: x", "FAIL: x"},
	{"CSI private", "\x1b[?25lhidden cursor\x1b[?1049h", "hidden cursor"},
	{"CSI unfinished", "a\x1b[12;", "a"},
	{"8-bit CSI byte", "a\x9b2Jb\x9b31mc", "abc"},
	{"C1 CSI in UTF-8", "a\u009b2Jb", "ab"},
	{"C1 OSC and ST in UTF-8", "a\u009d52;c;eA==\u009cb", "ab"},
	{"8-bit OSC and ST bytes", "a\x9d52;c;eA==\x9cb", "ab"},
	{"DCS", "a\x1bP+q544e\x1b\\b", "ab"},
	{"APC, PM, SOS", "a\x1b_x\x07b\x1b^y\x07c\x1bXz\x07d", "abcd"},
	{"other escapes", "\x1b7x\x1b8\x1b(B\x1b#8y\x1bcz", "xyz"},
	{"BEL", "ding\x07dong", "dingdong"},
	{"ESC alone at the end", "end\x1b", "end"},
	{"ESC before non-ASCII", "a\x1bé", "aé"},
	{"other C1", "a\u0085b\x84c", "abc"},
	{"carriage return", "safe\rEVIL", "safeEVIL"},
	{"CRLF", "a\r\nb", "a\nb"},
	{"backspace", "abc\b\b\bxyz", "abcxyz"},
	{"NUL and DEL", "a\x00b\x7fc", "abc"},
	{"newline and tab kept", "a\n\tb\n", "a\n\tb\n"},
	{"invalid UTF-8", "a\xffb\xc3", "a\ufffdb\ufffd"},
	{"text kept", "héllo 世界 ✅ ě", "héllo 世界 ✅ ě"},
	{"multibyte inside a string", "\x1b]0;ěĜ\x07ok", "ok"},
}

func TestString(t *testing.T) {
	for _, c := range cases {
		got := String(c.in)
		if got != c.want {
			t.Errorf("%s: String(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		if err := obeyed(got); err != nil {
			t.Errorf("%s: String(%q) = %q: %v", c.name, c.in, got, err)
		}
	}
	// The check catches what String removes.
	for _, c := range cases {
		if c.in != c.want && !strings.HasPrefix(c.name, "multibyte") && obeyed(c.in) == nil {
			t.Errorf("%s: the check passes %q", c.name, c.in)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if err := obeyed(got); err != nil {
			t.Fatalf("String(%q) = %q: %v", s, got, err)
		}
		if String(got) != got {
			t.Fatalf("String is not idempotent on %q", s)
		}
	})
}

// A sequence split across writes loses its control characters all the
// same.
func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, p := range []string{"FAIL: TestX\x1b]52;c;", "ZWNobw==\x07 and \x1b", "[2J done\n"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if err := obeyed(buf.String()); err != nil || !strings.Contains(buf.String(), "FAIL: TestX") {
		t.Errorf("wrote %q: %v", buf.String(), err)
	}
}

// encoding/json escapes C0 controls but writes DEL and the C1 controls as
// they are; JSON escapes those too, and the value decodes the same.
func TestJSON(t *testing.T) {
	v := map[string]string{"test": "TestX\x1b]52;c;eA==\x07\x1b[2J", "c1": "a\u009b2J\u009d8;;x\u009cb\x7f", "text": "é ✅ \u00a0"}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(raw, "\x1b\x07") {
		t.Errorf("encoding/json wrote a C0 control: %q", raw)
	}
	if obeyed(string(raw)) == nil {
		t.Errorf("encoding/json escaped DEL and C1 (%q): JSON is not needed", raw)
	}
	safe := JSON(raw)
	if err := obeyed(string(safe)); err != nil {
		t.Errorf("JSON(%q) = %q: %v", raw, safe, err)
	}
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil || fmt.Sprint(back) != fmt.Sprint(v) {
		t.Errorf("JSON(%q) = %q decodes to %q, %v; want %q", raw, safe, back, err, v)
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("JSON copies a text it does not change")
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(NewJSONWriter(&buf)).Encode(v); err != nil || obeyed(buf.String()) != nil {
		t.Errorf("JSONWriter wrote %q, %v", buf.String(), err)
	}
}
