// Package markdown puts text from outside redfix (test names and output,
// file paths, commit subjects and authors, CI reports, what a model wrote)
// into GitHub-flavoured Markdown so that it shows as the text it is: it
// cannot open or close a block, emphasise, link, embed an image or HTML,
// break a table, mention a person or a team, or refer to an issue.
//
// Two encodings are used. Code and CodeBlock show text verbatim as code,
// with fences longer than any run of backticks in it; GitHub does not look
// for mentions, references or links inside code. Text, Cell and Quote show
// text as prose: every character Markdown gives a meaning to is escaped
// with a backslash, and what GitHub would turn into a mention, a reference
// or a link is broken with an invisible word joiner (NoRefs).
package markdown

import "strings"

// Joiner is U+2060 WORD JOINER: invisible, and no line breaks at it. It is
// put inside a mention (@⁠org/team), a reference (#⁠12) or a bare URL so that
// GitHub no longer recognises it, while a reader sees the same text.
const Joiner = "\u2060"

// Code is s as an inline code span: verbatim, on one line (line breaks
// become spaces), fenced with one backtick more than the longest run of
// backticks in s, as CommonMark requires for the span not to end early.
func Code(s string) string {
	s = oneLine(s)
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	// A span's first and last space are stripped when both are there, and a
	// backtick next to the fence would lengthen it: pad with a space.
	if s[0] == '`' || s[len(s)-1] == '`' || (s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// CodeBlock is s as a fenced code block with the info string lang (written
// by redfix, not outside text), ending with a blank line. The fence is one
// backtick longer than the longest run of backticks in s, and at least
// three, so no line of s can close it.
func CodeBlock(lang, s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n\n"
}

// Text is s as one line of prose: line breaks become spaces, surrounding
// space is trimmed, characters with a meaning in Markdown are escaped
// (those that only mean something at the start of a line, such as # or
// "1.", escaped there), and mentions, references and bare URLs are broken
// with NoRefs. It may be written anywhere in a line, including its start.
func Text(s string) string {
	s = NoRefs(strings.TrimSpace(oneLine(s)))
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	// An ordered list starts with up to nine digits and "." or ")".
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("\\`*_[]<>&|~$", c) >= 0:
			b.WriteByte('\\')
		case i == 0 && strings.IndexByte("#-+=", c) >= 0:
			b.WriteByte('\\')
		case i == digits && digits > 0 && digits < 10 && (c == '.' || c == ')'):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Quote is s as a block quote of prose, one "> " line for each of its
// lines, each written as Text; it ends with a newline.
func Quote(s string) string {
	var b strings.Builder
	for _, l := range lines(strings.TrimSpace(s)) {
		b.WriteString(strings.TrimRight("> "+Text(l), " ") + "\n")
	}
	return b.String()
}

// Cell is s as the content of a table cell: Text on each line (which
// escapes "|"), the lines joined with <br>.
func Cell(s string) string {
	parts := lines(strings.TrimSpace(s))
	for i, l := range parts {
		parts[i] = Text(l)
	}
	return strings.Join(parts, "<br>")
}

// NoRefs breaks what GitHub turns into a notification or a link in text
// outside code, by putting Joiner inside it: @mentions of people and teams
// (and so e-mail addresses), issue and pull request references (#12,
// GH-12, owner/repo#12, whose closing keywords would close the issue on
// merge), and bare URLs (scheme://…, www.…). Nothing else changes; it is
// also for plain text GitHub reads, such as commit messages.
func NoRefs(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == '@' && next != 0 && !isSpace(next):
			b.WriteString(Joiner)
		case c == '#' && isDigit(next):
			b.WriteString(Joiner)
		case c == '-' && isDigit(next) && i >= 2 && strings.EqualFold(s[i-2:i], "gh"):
			b.WriteString(Joiner)
		case c == ':' && strings.HasPrefix(s[i+1:], "//"):
			b.WriteString(Joiner)
		case c == 'w' || c == 'W':
			if i >= 2 && next == '.' && strings.EqualFold(s[i-2:i+1], "www") {
				b.WriteString(Joiner)
			}
		}
	}
	return b.String()
}

// Dest is a URL made safe as a link's destination: every byte that could
// end the destination or the link, or is not plain ASCII, is
// percent-encoded. URLs redfix builds from outside text (a file path in a
// repository) go through it.
func Dest(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		c := u[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~:/?#@!$&*+,;=%", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// oneLine replaces each line break (\r\n, \r or \n, the ones CommonMark
// knows) with a space.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(lines(s), " ")
}

// lines splits s at \r\n, \r and \n.
func lines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return strings.IndexByte(" \t\n\r\f\v", c) >= 0 }
