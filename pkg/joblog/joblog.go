// Package joblog reads the test results a CI job printed to its log, for a
// run that uploaded no test report. It strips what the CI services add to
// each line (timestamps, folding groups and section markers, colours,
// carriage returns), bounds what is read, and asks every reader it was
// given (the language drivers' console readers, registered in
// pkg/lang/all) for the report the lines hold. It names no runner: the
// readers do.
package joblog

import (
	"bytes"
	"regexp"
	"strings"
)

// Limits on what a log gives its readers. A log is untrusted: it is read
// from its end (where runners print their summaries), at most MaxLines
// lines of at most MaxLineBytes bytes each; a reader keeps at most
// MaxFailures failures of a log.
const (
	MaxLines     = 200_000
	MaxLineBytes = 8 << 10
	MaxFailures  = 1000
	// MaxName bounds a test's or a file's name read from a log.
	MaxName = 512
)

// ConsoleReader is a driver's capability to read its runners' console
// output: the report the lines hold (cleaned by Lines), in a form
// report.Parse reads, or nil when they hold none of its runners' results.
type ConsoleReader interface {
	ReadConsole(lines []string) []byte
}

// Readers are the console readers of a set of drivers, asked in order.
type Readers []ConsoleReader

// Of are the console readers among drivers: those that have the
// capability (asked with a type assertion); the others are left out.
func Of[D any](drivers []D) Readers {
	var rs Readers
	for _, d := range drivers {
		if r, ok := any(d).(ConsoleReader); ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// Reports are the reports a job's log holds, one per reader that found
// its runners' results in it (a job may run several runners); nil when
// none did.
func (rs Readers) Reports(log []byte) [][]byte {
	if len(rs) == 0 {
		return nil
	}
	lines := Lines(log)
	var out [][]byte
	for _, r := range rs {
		if rep := r.ReadConsole(lines); len(rep) > 0 {
			out = append(out, rep)
		}
	}
	return out
}

var (
	// GitHub Actions writes a timestamp before each line, the first
	// sometimes after a byte-order mark.
	timestampRE = regexp.MustCompile(`^\x{FEFF}?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?`)
	// GitLab's collapsible sections: "section_start:1700000000:name\r\x1b[0K".
	sectionRE = regexp.MustCompile(`section_(?:start|end):\d+:[A-Za-z0-9_.\-\[\]=,]*\r?`)
)

// Lines are the lines of a job's log as the runners printed them: GitHub's
// timestamps, GitLab's section markers, ANSI escapes and carriage returns
// taken away, and GitHub's workflow commands (##[group], ##[endgroup],
// ##[error]…, the service's lines between steps) made empty lines, a
// boundary no runner's output runs across.
// A line a carriage return rewrote keeps its last state. Only the last
// MaxLines lines are kept, each cut at MaxLineBytes.
func Lines(log []byte) []string {
	log = tail(log, MaxLines)
	n := bytes.Count(log, []byte("\n")) + 1
	out := make([]string, 0, n)
	for len(log) > 0 {
		line := log
		if i := bytes.IndexByte(log, '\n'); i >= 0 {
			line, log = log[:i], log[i+1:]
		} else {
			log = nil
		}
		if len(line) > MaxLineBytes*4 {
			line = line[:MaxLineBytes*4] // escapes may make up most of it
		}
		out = append(out, clean(string(line)))
	}
	return out
}

// clean is one line of a log without the services' decorations.
func clean(l string) string {
	if l != "" && (l[0] >= '0' && l[0] <= '9' || l[0] == 0xEF) {
		l = timestampRE.ReplaceAllString(l, "")
	}
	if strings.Contains(l, "section_") {
		l = sectionRE.ReplaceAllString(l, "")
	}
	if strings.IndexByte(l, 0x1b) >= 0 {
		l = stripEscapes(l)
	}
	l = strings.TrimRight(l, "\r")
	if i := strings.LastIndexByte(l, '\r'); i >= 0 {
		l = l[i+1:] // what the terminal showed last
	}
	if strings.HasPrefix(l, "##[") {
		return ""
	}
	if len(l) > MaxLineBytes {
		l = strings.ToValidUTF8(l[:MaxLineBytes], "")
	}
	return l
}

// stripEscapes takes away a line's terminal escapes: control sequences
// (colours, erasing: ESC [ parameters, intermediates, a final byte),
// operating system commands (ESC ] … ended by BEL or ESC \, as hyperlinks
// are written) and the other two-byte escapes. An escape cut short by the
// line's end goes with what follows it.
func stripEscapes(l string) string {
	var b strings.Builder
	b.Grow(len(l))
	for i := 0; i < len(l); {
		c := l[i]
		if c != 0x1b {
			b.WriteByte(c)
			i++
			continue
		}
		i++ // the ESC
		switch {
		case i >= len(l):
		case l[i] == '[':
			i++
			for i < len(l) && l[i] >= 0x20 && l[i] <= 0x3f { // parameters
				i++
			}
			for i < len(l) && l[i] >= 0x20 && l[i] <= 0x2f { // intermediates
				i++
			}
			if i < len(l) && l[i] >= 0x40 && l[i] <= 0x7e { // the final byte
				i++
			}
		case l[i] == ']':
			for i++; i < len(l); i++ {
				if l[i] == 0x07 {
					i++
					break
				}
				if l[i] == 0x1b && i+1 < len(l) && l[i+1] == '\\' {
					i += 2
					break
				}
			}
		case l[i] >= 0x40 && l[i] <= 0x5f:
			i++
		}
	}
	return b.String()
}

// tail is the end of log holding at most n lines.
func tail(log []byte, n int) []byte {
	end := len(log)
	for i := 0; i < n; i++ {
		j := bytes.LastIndexByte(log[:end], '\n')
		if j < 0 {
			return log
		}
		end = j
	}
	return log[end+1:]
}

// SafeName reports whether a name read from a log (a test's, a file's) may
// become part of a test id: not empty, not too long, no control
// characters, and, as a path, relative and inside the checkout.
func SafeName(s string) bool {
	if s == "" || len(s) > MaxName {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
		return false
	}
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return false
		}
	}
	return true
}
