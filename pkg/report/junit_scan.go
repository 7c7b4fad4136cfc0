package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// junitSource counts the bytes read, and keeps the reader's own error so
// that a failed read is not called malformed XML. It stops at a start tag
// with too many attributes before the decoder has read them all.
type junitSource struct {
	r    io.Reader
	n    int64
	err  error
	tags tagScanner
}

func (s *junitSource) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	if s.tags.scan(p[:n]) != nil {
		return 0, s.tags.err
	}
	return n, err
}

// tagScanner follows XML's markup in the bytes read, as far as it takes to
// count the attributes of each start tag (one quoted value each); what it
// does not follow exactly (a document type's internal subset) it may
// count less, never more.
type tagScanner struct {
	maxAttrs int
	state    tagState
	quote    byte
	attrs    int
	// run counts the bytes of a terminator seen ("--" of "-->", "]]" of
	// "]]>"); bang holds the bytes after "<!" until they tell a comment,
	// a CDATA section and a directive apart; depth is a directive's
	// nesting of angle brackets.
	run   int
	bang  []byte
	depth int
	err   error
}

type tagState uint8

const (
	inText tagState = iota
	afterLT
	inStartTag
	inAttrValue
	inEndTag
	afterBang
	inComment
	inCDATA
	inPI
	inDirective
	inDirectiveQuote
)

func (s *tagScanner) scan(b []byte) error {
	for _, c := range b {
		if s.err != nil {
			break
		}
		s.step(c)
	}
	return s.err
}

func (s *tagScanner) step(c byte) {
	switch s.state {
	case inText:
		if c == '<' {
			s.state = afterLT
		}
	case afterLT:
		switch c {
		case '!':
			s.state, s.bang = afterBang, s.bang[:0]
		case '?':
			s.state, s.run = inPI, 0
		case '/':
			s.state = inEndTag
		default:
			s.state, s.attrs = inStartTag, 0
		}
	case inStartTag:
		switch c {
		case '"', '\'':
			if s.attrs++; s.attrs > s.maxAttrs {
				s.err = fmt.Errorf("an element with more than %d attributes: the limit of a test report", s.maxAttrs)
			}
			s.state, s.quote = inAttrValue, c
		case '>':
			s.state = inText
		}
	case inAttrValue:
		if c == s.quote {
			s.state = inStartTag
		}
	case inEndTag:
		if c == '>' {
			s.state = inText
		}
	case afterBang:
		s.bang = append(s.bang, c)
		switch b := string(s.bang); {
		case b == "--":
			s.state, s.run = inComment, 0
		case b == "[CDATA[":
			s.state, s.run = inCDATA, 0
		case !strings.HasPrefix("--", b) && !strings.HasPrefix("[CDATA[", b):
			// A directive (<!DOCTYPE …>): the bytes so far are its own.
			s.state, s.depth = inDirective, 0
			for _, d := range s.bang {
				s.step(d)
			}
		}
	case inComment:
		switch {
		case c == '-':
			s.run++
		case c == '>' && s.run >= 2:
			s.state = inText
		default:
			s.run = 0
		}
	case inCDATA:
		switch {
		case c == ']':
			s.run++
		case c == '>' && s.run >= 2:
			s.state = inText
		default:
			s.run = 0
		}
	case inPI:
		switch {
		case c == '>' && s.run > 0:
			s.state = inText
		case c == '?':
			s.run = 1
		default:
			s.run = 0
		}
	case inDirective:
		switch c {
		case '"', '\'':
			s.state, s.quote = inDirectiveQuote, c
		case '<':
			s.depth++
		case '>':
			if s.depth == 0 {
				s.state = inText
			} else {
				s.depth--
			}
		}
	case inDirectiveQuote:
		if c == s.quote {
			s.state = inDirective
		}
	}
}
