// Package memlimit gives a process the Go runtime's soft memory limit that
// its configuration asks for (runtime/debug.SetMemoryLimit): as the memory
// the runtime holds nears it, the collector runs harder, so that one
// input's spike of garbage does not take the process to the node's limit.
// The operator's GOMEMLIMIT, which the runtime applied when the process
// started, wins over the configuration.
//
// The limit covers the memory the Go runtime manages; what C code
// allocates (tree-sitter's parsers) is outside it, which is why the
// inputs those parsers read are bounded before they read them.
package memlimit

import (
	"fmt"
	"math"
	"runtime/debug"
)

// Where a limit comes from.
const (
	FromEnv    = "GOMEMLIMIT"    // the operator's environment
	FromConfig = "configuration" // Set's argument
	FromNone   = "none"          // no limit at all
)

// Limit is the limit in force after Set.
type Limit struct {
	// Bytes is the limit; math.MaxInt64 means none.
	Bytes int64
	// From says where it comes from: FromEnv, FromConfig or FromNone.
	From string
}

func (l Limit) String() string {
	if l.Bytes == math.MaxInt64 {
		return "none"
	}
	return fmt.Sprintf("%d MiB (%s)", l.Bytes>>20, l.From)
}

// Set sets the process's soft memory limit to mb mebibytes, or to none
// when mb is 0, unless getenv("GOMEMLIMIT") is set: the runtime applied
// that one at start, and it stands. It returns the limit in force and a
// function that puts back the one before the call, for a command that runs
// inside a longer process (a test's).
func Set(mb int, getenv func(string) string) (Limit, func()) {
	before := debug.SetMemoryLimit(-1)
	restore := func() { debug.SetMemoryLimit(before) }
	if getenv("GOMEMLIMIT") != "" {
		return Limit{Bytes: before, From: FromEnv}, restore
	}
	l := Limit{Bytes: math.MaxInt64, From: FromNone}
	if mb > 0 {
		l = Limit{Bytes: int64(mb) << 20, From: FromConfig}
	}
	debug.SetMemoryLimit(l.Bytes)
	return l, restore
}
