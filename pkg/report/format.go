package report

import (
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// Format is a driver's capability to read a report format of its runners
// other than JUnit XML (which pkg/report reads itself): a stream of JSON
// events, say. Parse asks every registered format, in the order they were
// registered, whether a report is theirs.
type Format interface {
	// Name is the format as a Result names it (Result.Format).
	Name() string
	// Describe names the format for people ("the runner's JSON events"),
	// in the error of a report that no format reads.
	Describe() string
	// Sniff reports whether data (a report, trimmed of blank space, not
	// empty) is in the format.
	Sniff(data []byte) bool
	// Parse reads a report in the format.
	Parse(r io.Reader) (Result, error)
}

// Screener is a format that can tell, at a fraction of a parse's cost,
// that Parse would not refuse a report: Screen refuses exactly what Parse
// refuses, with the same reasons (see report.Screen).
type Screener interface {
	Screen(data []byte) error
}

var formats struct {
	mu  sync.Mutex // serializes registrations
	all atomic.Pointer[[]Format]
}

// RegisterFormat adds a driver's report format. Drivers call it from their
// package's init (pkg/lang/all loads every driver); a format is never taken
// back.
func RegisterFormat(f Format) {
	formats.mu.Lock()
	defer formats.mu.Unlock()
	var all []Format
	if old := formats.all.Load(); old != nil {
		all = append(all, *old...)
	}
	all = append(all, f)
	formats.all.Store(&all)
}

// registered are the formats registered so far.
func registered() []Format {
	if all := formats.all.Load(); all != nil {
		return *all
	}
	return nil
}

// sniff is the first registered format that claims data (trimmed), or nil.
func sniff(data []byte) Format {
	for _, f := range registered() {
		if f.Sniff(data) {
			return f
		}
	}
	return nil
}

// wanted names the formats Parse reads, for the error of a report that is
// in none of them.
func wanted() string {
	var names []string
	for _, f := range registered() {
		names = append(names, f.Describe())
	}
	return strings.Join(append(names, "JUnit XML"), " or ")
}
