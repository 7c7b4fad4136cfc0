package report

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redfix/redfix/pkg/clip"
	"github.com/redfix/redfix/pkg/task"
)

// OutputReader is a driver's capability to read a failing test's output
// as its runner prints it (RegisterOutputReader, from the driver's init):
// which line says what failed, and which source locations say where.
// ParseJUnit reads each failing case's output with the first registered
// reader that takes it, before the case's dialect (JUnitDialect) describes
// it; an output that no reader takes is read as any text (DescribeOutput).
type OutputReader interface {
	// ReadOutput fills f's frames from f.Output (already capped) and, when
	// f has no message, its message; build: f stands for a file or a
	// package that did not build. False when the output shows nothing of
	// the reader's runner; f is then left as it was. A reader takes every
	// output its reading of differs from any text's.
	ReadOutput(f *task.Failure, build bool) bool
}

var outputReaders struct {
	mu  sync.Mutex // serializes registrations
	all atomic.Pointer[[]OutputReader]
}

// RegisterOutputReader adds a driver's reading of its runners' output.
// Drivers call it from their package's init (pkg/lang/all loads every
// driver); a reader is never taken back.
func RegisterOutputReader(r OutputReader) {
	outputReaders.mu.Lock()
	defer outputReaders.mu.Unlock()
	var all []OutputReader
	if old := outputReaders.all.Load(); old != nil {
		all = append(all, *old...)
	}
	all = append(all, r)
	outputReaders.all.Store(&all)
}

// readers are the output readers registered so far.
func readers() []OutputReader {
	if all := outputReaders.all.Load(); all != nil {
		return *all
	}
	return nil
}

// DescribeOutput caps a failure's output and fills its frames and, when it
// has none, its message from it: as the first registered OutputReader that
// takes the output reads it, or as any text (no frames; the message its
// first line, blank lines and the marks of text left out apart).
func DescribeOutput(f *task.Failure, build bool) {
	f.Output = CapOutput(f.Output)
	for _, r := range readers() {
		if r.ReadOutput(f, build) {
			return
		}
	}
	f.Frames = nil
	if f.Message == "" {
		f.Message = FirstLine(f.Output)
	}
}

// FirstLine is the first line of output that says something, capped
// (CapMessage): blank lines and the marks of text left out (Omission)
// apart; "" when there is none.
func FirstLine(output string) string {
	for _, l := range strings.Split(output, "\n") {
		if t := strings.TrimSpace(l); t != "" && !Omission(t) {
			return CapMessage(t)
		}
	}
	return ""
}

// Omission reports a line (trimmed) that marks text left out of an output
// ("[… 120 characters omitted …]"), as clip, Text and the JUnit reader
// write them.
func Omission(line string) bool { return strings.HasPrefix(line, "[… ") }

// CapOutput caps a failure's output: its middle is left out of a long one.
func CapOutput(s string) string { return clip.Middle(s, maxOutput) }
