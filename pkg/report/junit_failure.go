package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/task"
)

// suiteOutput is a suite's system-out and system-err as kept, and the
// characters left out of them.
type suiteOutput struct {
	out, err string
	hidden   int
}

func (p *junitParser) failure(tc *junitCase, suite suiteOutput) task.Failure {
	f := task.Failure{Package: tc.pkg, Test: tc.name}
	if tc.status == statusError {
		f.Kind = "error"
	}
	// Characters left out of capped texts: the output is shortened as if
	// they were there (clip.MiddleOf).
	hidden := 0
	text := func(x *junitText) string {
		t, h := x.kept()
		hidden += h
		return t
	}
	body := text(tc.body)
	if Informative(tc.message) {
		f.Message = strings.TrimSpace(tc.message)
	}
	if f.Message == "" && strings.TrimSpace(body) == "" && tc.typ != "" {
		f.Message = tc.typ
	}
	parts := []string{body, text(tc.out), text(tc.err)}
	if n := len(suite.out) + len(suite.err); n > 0 {
		if p.suiteOut+n <= p.lim.suiteOutput {
			p.suiteOut += n
			hidden += suite.hidden
			parts = append(parts, suite.out, suite.err)
		} else {
			parts = append(parts, fmt.Sprintf("[… the suite's system-out and system-err (%d bytes) are left out: the report's failures already repeat %d bytes of their suites' output …]", n, p.suiteOut))
		}
	}
	var out strings.Builder
	for _, part := range parts {
		if strings.TrimSpace(part) == "" {
			continue
		}
		out.WriteString(strings.TrimRight(part, "\n"))
		out.WriteString("\n")
	}
	f.Output = out.String()
	build := tc.build || tc.name == "[build failed]" || compileFailure(tc.name, f.Output)
	if hidden > 0 {
		f.Output = clip.MiddleOf(f.Output, hidden, maxOutput)
	}
	DescribeOutput(&f, build)
	if !p.describeInDialect(&f, tc, body, build) && len(f.Frames) == 0 {
		f.Frames = TraceFrames(f.Output)
	}
	return f
}

// attr is the value of el's attribute name (the last one, whatever its
// namespace), or "".
func attr(el xml.StartElement, name string) string {
	v := ""
	for _, a := range el.Attr {
		if a.Name.Local == name {
			v = a.Value
		}
	}
	return v
}

// junitText is one text of a report, capped: its head and its tail are
// kept as Text keeps a test's output. A text of blank characters only is
// "", however long.
type junitText struct {
	t        Text
	runes    int // written
	nonBlank bool
}

// textChunk is the largest piece a text is given to Text in, so that the
// tail it keeps is cut finely; pieces end at a line's end when one is near.
const textChunk = 4 << 10

func (x *junitText) write(b []byte) {
	if x.t.Head == 0 {
		x.t.Head, x.t.Tail = junitTextHead, junitTextTail
	}
	if !x.nonBlank && len(bytes.TrimSpace(b)) > 0 {
		x.nonBlank = true
	}
	x.runes += utf8.RuneCount(b)
	for len(b) > 0 {
		n := min(len(b), textChunk)
		if n < len(b) {
			if i := bytes.LastIndexByte(b[:n], '\n'); i >= 0 {
				n = i + 1
			} else {
				for n > 1 && !utf8.RuneStart(b[n]) {
					n--
				}
			}
		}
		x.t.add(string(b[:n]))
		b = b[n:]
	}
}

// kept is the text's head and tail joined, and how many characters were
// left out between them; a nil text is "".
func (x *junitText) kept() (s string, hidden int) {
	if x == nil || !x.nonBlank {
		return "", 0
	}
	if x.t.omitted == 0 {
		return x.t.String(), 0
	}
	var b strings.Builder
	b.WriteString(x.t.head.String())
	for _, piece := range x.t.tail {
		b.WriteString(piece)
	}
	return b.String(), x.runes - utf8.RuneCountInString(b.String())
}

// capText caps an attribute's value as a text is capped.
func capText(s string) string {
	if len(s) <= junitTextHead+junitTextTail-textChunk || strings.TrimSpace(s) == "" {
		return s
	}
	var x junitText
	x.write([]byte(s))
	return x.t.String()
}

// compileErrorRE is a line of the Go compiler's output: "pay/pay.go:12:2: msg".
var compileErrorRE = regexp.MustCompile(`(?m)^\S+\.go:\d+:\d+: \S`)

// compileFailure recognizes gotestsum's report of a package that did not
// compile: a failing TestMain whose output is compiler errors, not a run.
func compileFailure(name, output string) bool {
	return name == "TestMain" && compileErrorRE.MatchString(output) && !strings.Contains(output, "=== RUN")
}

// traceFrameRE is a source location in another language's trace: Java's
// "(CartTest.java:42)", Python's "tests/test_x.py:14", JavaScript's
// "(/src/Cart.test.js:21:30)".
var traceFrameRE = regexp.MustCompile(`([\w./\-]+\.(?:java|kt|scala|py|js|jsx|mjs|cjs|ts|tsx|rb|cs)):(\d+)`)

// MaxTraceFrames bounds the frames kept from a trace.
const MaxTraceFrames = 5

// TraceFrames are the distinct source locations of a trace, in order,
// without runtime-internal ones (node:internal, site-packages).
func TraceFrames(output string) []string {
	var frames []string
	seen := map[string]bool{}
	for _, m := range traceFrameRE.FindAllStringSubmatch(output, -1) {
		file := m[1]
		if strings.Contains(file, "node_modules/") || strings.Contains(file, "site-packages/") || strings.HasPrefix(file, "internal/") {
			continue
		}
		fr := file + ":" + m[2]
		if seen[fr] {
			continue
		}
		seen[fr] = true
		frames = append(frames, fr)
		if len(frames) == MaxTraceFrames {
			break
		}
	}
	return frames
}

// Informative reports whether a failure's message attribute says more than
// that the test failed; go-junit-report, for one, writes message="Failed".
func Informative(msg string) bool {
	switch strings.ToLower(strings.TrimSpace(msg)) {
	case "", "failed", "failure", "fail", "error", "build error", "test failed":
		return false
	}
	return true
}
