package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/redfix/redfix/pkg/termsafe"
)

// IsTerminal reports whether w is a terminal (an *os.File on a tty): where
// progress meant for a person watching goes, never into a pipe, a file or
// CI's log.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TerminalProgress is NewProgress's bar when w is a terminal, and reports
// nothing otherwise: for commands whose output is the result alone when it
// goes to a pipe or a file.
func TerminalProgress(w io.Writer, noun string) Progress {
	if !IsTerminal(w) {
		return nopProgress{}
	}
	return NewProgress(w, noun)
}

// StageLines returns a function that prints one line per stage of a long
// command to w ("[  12.3s] stage     detail") when w is a terminal, and
// prints nothing otherwise.
func StageLines(w io.Writer) func(stage, detail string) {
	if !IsTerminal(w) {
		return func(string, string) {}
	}
	var mu sync.Mutex
	start := time.Now()
	return func(stage, detail string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "[%5.1fs] %-9s %s\n", time.Since(start).Seconds(), stage, detail)
	}
}

// NewProgress reports to w: a bar redrawn in place when w is a terminal,
// plain lines otherwise (a log file, CI).
func NewProgress(w io.Writer, noun string) Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		width, _, err := term.GetSize(int(f.Fd()))
		if err != nil || width < 40 {
			width = 80
		}
		return &bar{w: w, noun: noun, width: width, start: time.Now()}
	}
	return &lines{w: w}
}

// lines prints each finished unit on a line of its own.
type lines struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	n     int
}

func (l *lines) Total(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total = n
}

func (l *lines) Step(string) {}

func (l *lines) Done(line string, counts bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line = termsafe.String(line) // task IDs and subjects are the repository's text
	if counts {
		l.n++
		fmt.Fprintf(l.w, "[%d/%d] %s\n", l.n, l.total, line)
		return
	}
	fmt.Fprintf(l.w, "      %s\n", line)
}

// bar keeps one line at the bottom of a terminal: how far, how long, and
// what is being done; finished units scroll above it.
type bar struct {
	mu       sync.Mutex
	w        io.Writer
	noun     string
	width    int
	total, n int
	step     string
	start    time.Time
}

func (b *bar) Total(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = n
	b.drawLocked()
}

func (b *bar) Step(what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.step = termsafe.String(what)
	b.drawLocked()
}

func (b *bar) Done(line string, counts bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if counts {
		b.n++
	}
	fmt.Fprintf(b.w, "\r\x1b[K%s\n", termsafe.String(line))
	b.step = ""
	b.drawLocked()
}

func (b *bar) drawLocked() {
	const cells = 24
	filled := cells
	if b.total > 0 {
		filled = min(cells, cells*b.n/b.total)
	}
	eta := ""
	if b.n > 0 && b.total > b.n {
		per := time.Since(b.start) / time.Duration(b.n)
		eta = fmt.Sprintf(" · ~%s left", (per * time.Duration(b.total-b.n)).Round(time.Second))
	}
	s := fmt.Sprintf("[%s%s] %d/%d %s · %s%s", strings.Repeat("█", filled), strings.Repeat("░", cells-filled),
		b.n, b.total, b.noun, time.Since(b.start).Round(time.Second), eta)
	if b.step != "" {
		s += " · " + b.step
	}
	if r := []rune(s); len(r) > b.width-1 {
		s = string(r[:b.width-1])
	}
	fmt.Fprintf(b.w, "\r\x1b[K%s", s)
}
