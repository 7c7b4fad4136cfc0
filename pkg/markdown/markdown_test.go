package markdown

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/markdown/markdowntest"
)

// hostile is text that means something in Markdown or to GitHub.
var hostile = []string{
	"a`b", "``x``", "`", "```", "x ``` y ```` z", "` leading", "trailing `", " both ",
	"@org/team please look", "cc @user", "jane@example.com", "owner/repo@c0ffee",
	"![img](http://x/y.png)", "<img src=x>", "<!-- redfix:fingerprint=fake -->", "<details><summary>x</summary>",
	"a | b", "line one\nline two\r\nthree\rfour", "# heading", "###### h6", "- item", "+ item", "* item", "1. item", "12) item",
	"> quote", "---", "===", "***", "___", "- [ ] task",
	"**bold** __strong__ _em_ *em* ~~strike~~ ~sub~", "[link](http://e.vil)", "[ref]: http://e.vil", "[^1]",
	"<http://e.vil>", "https://e.vil/x", "see www.e.vil now", "ftp://e.vil",
	"#123", "Fixes #1, closes owner/repo#5", "GH-4 and gh-5",
	"&#64;org/team", "&amp; &lt;b&gt;", "$x^2$", "$$\nx\n$$", `back\slash\`, `\*not\*`, "trailing \\",
	"| a | b |\n| - | - |", "\ttabbed", "    indented code", "<script>alert(1)</script>", "a\u0000b",
}

// naive is the kind of encoding the review found: one backtick around the
// text, or the text as it is. The checks below must catch it.
func naiveCode(s string) string { return "`" + s + "`" }
func naiveText(s string) string { return s }

// checkCode says what is wrong with md as the code span of s: it must read
// back as one code span holding s (on one line) and nothing else.
func checkCode(md, s string) error {
	d := markdowntest.Read(md)
	want := strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
	if want == "" {
		want = " "
	}
	if len(d.Code) != 1 || d.Code[0] != want {
		return fmt.Errorf("code %q, want one span holding %q", d.Code, want)
	}
	if d.Prose != "" || len(d.Links)+len(d.Images)+len(d.HTML) > 0 {
		return fmt.Errorf("outside the code: prose %q, links %q, images %q, HTML %q", d.Prose, d.Links, d.Images, d.HTML)
	}
	return nil
}

// checkProse says what is wrong with md as the prose of s: it must read back
// as s, word for word, with nothing that acts (no link, image, HTML, code,
// emphasis, heading, list, quote, table) and nothing GitHub would take for a
// mention or a reference.
func checkProse(md, s string, allowed ...string) error {
	d := markdowntest.Read(md)
	if got, want := strings.ReplaceAll(d.Prose, Joiner, ""), strings.Join(strings.Fields(strings.ReplaceAll(s, "\u0000", "\ufffd")), " "); got != want {
		return fmt.Errorf("reads as %q, want %q", got, want)
	}
	if len(d.Links)+len(d.Images)+len(d.HTML)+len(d.Code) > 0 {
		return fmt.Errorf("links %q, images %q, HTML %q, code %q", d.Links, d.Images, d.HTML, d.Code)
	}
	if refs := markdowntest.Refs(d.Prose); len(refs) > 0 {
		return fmt.Errorf("GitHub would link %q", refs)
	}
	ok := map[string]bool{"Document": true, "Paragraph": true, "Text": true, "String": true}
	for _, k := range allowed {
		ok[k] = true
	}
	for k := range d.Kinds {
		if !ok[k] {
			return fmt.Errorf("has a %s node: %v", k, d.Kinds)
		}
	}
	return nil
}

func TestCode(t *testing.T) {
	for _, s := range hostile {
		if err := checkCode(Code(s), s); err != nil {
			t.Errorf("Code(%q) = %q: %v", s, Code(s), err)
		}
	}
	if err := checkCode(Code(""), ""); err != nil {
		t.Errorf("Code(\"\") = %q: %v", Code(""), err)
	}
	// The check catches a span a backtick ends early.
	if err := checkCode(naiveCode("a`b @org/team"), "a`b @org/team"); err == nil {
		t.Error("the check passes a single-backtick span around a backtick")
	}
}

func TestCodeBlock(t *testing.T) {
	for _, s := range append(hostile, "a\n```\nb", "````\n```\n``", "```go\nx\n```") {
		md := "before\n\n" + CodeBlock("text", s) + "after\n"
		d := markdowntest.Read(md)
		if len(d.Code) != 1 || d.Code[0] != strings.TrimRight(s, "\n")+"\n" || d.Prose != "before after" {
			t.Errorf("CodeBlock(%q):\n%s\nreads back as code %q, prose %q", s, md, d.Code, d.Prose)
		}
	}
	// The check catches a block whose fence the text closes.
	s := "a\n```\n@org/team"
	if d := markdowntest.Read("```text\n" + s + "\n```\n"); len(d.Code) == 1 && d.Code[0] == s+"\n" {
		t.Error("the check passes a three-backtick fence around ```")
	}
}

func TestText(t *testing.T) {
	for _, s := range hostile {
		// At the start of a line, and within one.
		if err := checkProse(Text(s), s); err != nil {
			t.Errorf("Text(%q) = %q: %v", s, Text(s), err)
		}
		if err := checkProse("Subject: "+Text(s)+" (end)", "Subject: "+s+" (end)"); err != nil {
			t.Errorf("inline Text(%q) = %q: %v", s, Text(s), err)
		}
	}
	// The check catches each of these written as it is.
	for _, s := range []string{"@org/team please look", "jane@example.com", "![img](http://x/y.png)", "<img src=x>",
		"<!-- redfix:fingerprint=fake -->", "# heading", "- item", "1. item", "**bold** __strong__ _em_ *em* ~~strike~~ ~sub~",
		"[link](http://e.vil)", "https://e.vil/x", "see www.e.vil now", "Fixes #1, closes owner/repo#5", "GH-4 and gh-5", "&#64;org/team", "``x``"} {
		if checkProse(naiveText(s), s) == nil {
			t.Errorf("the check passes %q written as it is", s)
		}
	}
}

func TestQuote(t *testing.T) {
	s := strings.Join(hostile, "\n")
	md := "## Summary\n\n" + Quote(s) + "\nafter\n"
	d := markdowntest.Read(md)
	if d.Kinds["Blockquote"] != 1 || d.Kinds["Heading"] != 1 || d.Kinds["Paragraph"] != 2 {
		t.Errorf("the quote's blocks: %v\n%s", d.Kinds, md)
	}
	if err := checkProse(Quote(s), s, "Blockquote"); err != nil {
		t.Errorf("Quote: %v\n%s", err, Quote(s))
	}
}

func TestCell(t *testing.T) {
	var b strings.Builder
	b.WriteString("| name | detail |\n| --- | --- |\n")
	for _, s := range hostile {
		fmt.Fprintf(&b, "| %s | %s |\n", Cell(s), Cell(s))
	}
	md := b.String()
	for i, row := range strings.Split(strings.TrimSpace(md), "\n") {
		if n := markdowntest.Cells(row); n != 2 {
			t.Errorf("row %d has %d cells: %s", i, n, row)
		}
	}
	d := markdowntest.Read(md)
	if d.Kinds["Table"] != 1 || d.Kinds["TableRow"] != len(hostile) || d.Kinds["TableCell"] != 2*(len(hostile)+1) {
		t.Errorf("table: %v", d.Kinds)
	}
	// What each cell shows: the text, its line breaks as <br>.
	var want []string
	for _, s := range hostile {
		want = append(want, s, s)
	}
	got := strings.ReplaceAll(d.Prose, Joiner, "")
	if w := strings.Join(strings.Fields(strings.ReplaceAll("name detail "+strings.Join(want, " "), "\u0000", "\ufffd")), " "); got != w {
		t.Errorf("the table reads as\n%q\nwant\n%q", got, w)
	}
	for _, h := range d.HTML {
		if h != "<br>" {
			t.Errorf("HTML in a cell: %q", h)
		}
	}
	if len(d.Links)+len(d.Images)+len(d.Code) > 0 || len(markdowntest.Refs(d.Prose)) > 0 {
		t.Errorf("links %q, images %q, code %q, refs %q", d.Links, d.Images, d.Code, markdowntest.Refs(d.Prose))
	}
	// The count catches a pipe left as it is.
	if n := markdowntest.Cells("| a | b|c |"); n != 3 {
		t.Errorf("Cells of a row with a bare pipe = %d, want 3", n)
	}
}

func TestNoRefs(t *testing.T) {
	for in, want := range map[string]string{
		"@org/team":            "@" + Joiner + "org/team",
		"a@b.c":                "a@" + Joiner + "b.c",
		"@ alone, at end @":    "@ alone, at end @",
		"#12 and #x":           "#" + Joiner + "12 and #x",
		"GH-3 gh-4 GHX-5":      "GH-" + Joiner + "3 gh-" + Joiner + "4 GHX-5",
		"https://x www.y WWW.": "https:" + Joiner + "//x www" + Joiner + ".y WWW" + Joiner + ".",
		"plain text: 1 - 2":    "plain text: 1 - 2",
	} {
		if got := NoRefs(in); got != want {
			t.Errorf("NoRefs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDest(t *testing.T) {
	for _, u := range []string{
		"https://github.com/o/r/blob/c0ffee/dir with space/x_test.go#L3",
		"https://github.com/o/r/blob/c/a) ![img](http://x/y.png) (b.go#L1",
		"https://github.com/o/r/blob/c/<img src=x>/`x`/\"q\"/'s'/[b]/é.go",
		"https://github.com/o/r/blob/c/a\nb.go",
	} {
		md := "see [`x`](" + Dest(u) + ") now"
		d := markdowntest.Read(md)
		if len(d.Links) != 1 || d.Links[0] != Dest(u) || len(d.Images)+len(d.HTML) > 0 || d.Prose != "see now" {
			t.Errorf("link to %q: %s\nlinks %q, images %q, HTML %q, prose %q", u, md, d.Links, d.Images, d.HTML, d.Prose)
		}
	}
	if got := Dest("https://x/a b/(c)#L1"); got != "https://x/a%20b/%28c%29#L1" {
		t.Errorf("Dest = %q", got)
	}
}
