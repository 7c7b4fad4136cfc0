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

// ErrRejected is returned by `worker validate` when a gate rejected the
// patch.
var ErrRejected = errors.New("the patch was rejected")

// MachineryError is a command that could not reach a decision because the
// machinery failed (git, go, the model), as opposed to a decision that went
// against the input. `worker validate` exits 2 on it.
type MachineryError struct{ Err error }

func (e *MachineryError) Error() string { return e.Err.Error() }
func (e *MachineryError) Unwrap() error { return e.Err }

// Machinery marks err as the machinery failing; nil stays nil.
func Machinery(err error) error {
	if err == nil {
		return nil
	}
	var me *MachineryError
	if errors.As(err, &me) {
		return err
	}
	return &MachineryError{Err: err}
}

// ExitCode maps an error to the process's exit status: 2 for usage errors
// and the machinery failing, 3 when no pull request was published, 1 otherwise
// (a rejected patch among them).
func ExitCode(err error) int {
	var (
		ue *UsageError
		me *MachineryError
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue), errors.Is(err, flag.ErrHelp), errors.As(err, &me):
		return 2
	case errors.Is(err, ErrNoPatch):
		return 3
	}
	return 1
}
