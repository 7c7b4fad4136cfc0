// Package app wires redfix's parts into the commands: cmd/bot and
// cmd/worker only parse their first argument and call in here, so that tests
// start the real programs.
package app

import (
	"errors"
	"flag"
)

// UsageError is a command line that cannot be run.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usage makes a usage error.
func Usage(msg string) error { return &UsageError{msg: msg} }

// ErrNoPatch is returned by one-shot repairs that published nothing.
var ErrNoPatch = errors.New("no pull request")

// ExitCode maps an error to the process's exit status: 2 for usage errors,
// 3 when no pull request was published, 1 otherwise.
func ExitCode(err error) int {
	var ue *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue), errors.Is(err, flag.ErrHelp):
		return 2
	case errors.Is(err, ErrNoPatch):
		return 3
	}
	return 1
}
