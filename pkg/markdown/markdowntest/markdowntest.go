// Package markdowntest reads Markdown as a reader on GitHub gets it, for
// the tests of what redfix writes. goldmark parses it with GitHub's
// extensions (tables, strikethrough, task lists, bare-URL autolinks); Read
// reports what in it acts (links, images, raw HTML), the text a reader sees
// outside code (where GitHub looks for mentions and references, which
// Refs finds), the code, and the kinds of nodes.
package markdowntest

import (
	"bufio"
	"bytes"
	stdhtml "html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
)

// Doc is what Read found in a Markdown document.
type Doc struct {
	// Links are the destinations of links and autolinks, Images those of
	// images.
	Links, Images []string
	// HTML is each piece of raw HTML as written: inline tags, HTML blocks
	// and comments.
	HTML []string
	// Prose is the text shown outside code and links, escapes and entities
	// resolved, whitespace collapsed to single spaces.
	Prose string
	// Code is the content of each code span and code block, in order.
	Code []string
	// Shown is all the text shown, code included, whitespace collapsed.
	Shown string
	// Kinds counts the nodes of each kind ("Heading", "List",
	// "Blockquote", "Emphasis", "FencedCodeBlock", "Table", …).
	Kinds map[string]int
	// Tables holds, for each table, the header's text cell by cell.
	Tables [][]string
}

// Read parses md.
func Read(md string) Doc {
	src := []byte(md)
	p := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe())).Parser()
	root := p.Parse(text.NewReader(src))
	d := Doc{Kinds: map[string]int{}}
	var prose, shown strings.Builder
	add := func(s string, isProse bool) {
		shown.WriteString(s)
		if isProse {
			prose.WriteString(s)
		}
	}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			if n.Type() == ast.TypeBlock {
				add(" ", true)
			}
			return ast.WalkContinue, nil
		}
		d.Kinds[n.Kind().String()]++
		switch n := n.(type) {
		case *ast.Text:
			add(shownText(n.Segment.Value(src)), true)
			if n.SoftLineBreak() || n.HardLineBreak() {
				add(" ", true)
			}
		case *ast.String:
			add(string(n.Value), true)
		case *ast.CodeSpan:
			var b strings.Builder
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					b.Write(t.Segment.Value(src))
				}
			}
			d.Code = append(d.Code, b.String())
			add(b.String(), false)
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			var b strings.Builder
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			d.Code = append(d.Code, b.String())
			add(b.String(), false)
		case *ast.Link:
			d.Links = append(d.Links, string(n.Destination))
			add(plain(n, src), false)
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			d.Links = append(d.Links, string(n.URL(src)))
			add(string(n.Label(src)), false)
		case *ast.Image:
			d.Images = append(d.Images, string(n.Destination))
		case *ast.RawHTML:
			var b strings.Builder
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				b.Write(seg.Value(src))
			}
			d.HTML = append(d.HTML, b.String())
			add(" ", true)
		case *ast.HTMLBlock:
			var b strings.Builder
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			if n.HasClosure() {
				b.Write(n.ClosureLine.Value(src))
			}
			d.HTML = append(d.HTML, strings.TrimRight(b.String(), "\n"))
		case *east.Table:
			var header []string
			if h := n.FirstChild(); h != nil && h.Kind() == east.KindTableHeader {
				for c := h.FirstChild(); c != nil; c = c.NextSibling() {
					header = append(header, strings.TrimSpace(collapse(plain(c, src))))
				}
			}
			d.Tables = append(d.Tables, header)
		}
		return ast.WalkContinue, nil
	})
	d.Prose = collapse(prose.String())
	d.Shown = collapse(shown.String())
	return d
}

// shownText is a text node's source as shown: backslash escapes and
// entities resolved as goldmark's renderer resolves them.
func shownText(v []byte) string {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	html.DefaultWriter.Write(w, v)
	_ = w.Flush()
	return stdhtml.UnescapeString(buf.String())
}

// plain is the text under n, as shown.
func plain(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			if c.Segment.Len() > 0 {
				if _, code := c.Parent().(*ast.CodeSpan); code {
					b.Write(c.Segment.Value(src))
				} else {
					b.WriteString(shownText(c.Segment.Value(src)))
				}
			}
			if c.SoftLineBreak() {
				b.WriteString(" ")
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// What GitHub turns into a notification or a link in text outside code.
var refPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?:^|[^\w])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9][\w.-]*)?`), // @user, @org/team
	regexp.MustCompile(`[\w.+-]+@[A-Za-z0-9-]+\.[A-Za-z]`),                             // an e-mail address
	regexp.MustCompile(`#\d`),                           // #12, owner/repo#12
	regexp.MustCompile(`(?i)\bgh-\d`),                   // GH-12
	regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://\S`),  // a bare URL
	regexp.MustCompile(`(?i)(?:^|[^\w.])www\.[a-z0-9]`), // www.example.com
}

// Refs are the mentions, references, addresses and bare URLs in text, as
// GitHub would find them.
func Refs(text string) []string {
	var found []string
	for _, re := range refPatterns {
		found = append(found, re.FindAllString(text, -1)...)
	}
	return found
}

// Cells is the number of cells in a table row as GFM splits it: at each
// pipe not preceded by a backslash, a leading and a trailing pipe
// excluded.
func Cells(row string) int {
	row = strings.TrimSpace(row)
	n, start := 0, 0
	for i := 0; i < len(row); i++ {
		if row[i] != '|' || i > 0 && row[i-1] == '\\' {
			continue
		}
		if i > 0 {
			n++
		}
		start = i + 1
	}
	if start < len(row) {
		n++ // no trailing pipe
	}
	return n
}
