// Package command acts on what people tell redfix where they review its
// work: the /redfix commands in comments on its pull requests (retry,
// revise, revert, close, explain) and the reviews that request changes,
// which send a pull request back to a worker as a revision, whichever
// forge they come from. Who may give a command is read from the forge (who
// may write to the repository), never from the comment.
package command

import (
	"strings"

	"github.com/redfix/redfix/pkg/forge"
)

// The commands.
const (
	Retry   = "retry"
	Revise  = "revise"
	Revert  = "revert"
	Close   = "close"
	Explain = "explain"
)

// Verbs are the commands, in the order the documentation gives them.
var Verbs = []string{Retry, Revise, Revert, Close, Explain}

// Command is one parsed command.
type Command struct {
	Verb string
	// What is revise's request: the rest of its line and the lines after
	// it. Empty for the other commands.
	What string
}

// Parse reads a command from a comment's first line: "/redfix", a space,
// and a known verb in lower case; revise takes words after it (the rest of
// the comment counts too), the others take none. Anything else is no
// command (ok false) and is ignored.
func Parse(body string) (c Command, ok bool) {
	if !forge.IsCommand(body) {
		return Command{}, false
	}
	first, rest, _ := strings.Cut(strings.TrimLeft(body, " \t"), "\n")
	first = strings.TrimRight(first, " \t\r")
	args := strings.TrimLeft(strings.TrimPrefix(first, forge.CommandPrefix), " \t")
	verb, words, _ := strings.Cut(args, " ")
	verb, words = strings.TrimSpace(verb), strings.TrimSpace(words)
	if v, w, ok := strings.Cut(verb, "\t"); ok {
		verb, words = v, strings.TrimSpace(w+" "+words)
	}
	switch verb {
	case Retry, Revert, Close, Explain:
		if words != "" {
			return Command{}, false
		}
		return Command{Verb: verb}, true
	case Revise:
		what := strings.TrimSpace(words + "\n" + strings.ReplaceAll(rest, "\r\n", "\n"))
		if what == "" {
			return Command{}, false
		}
		return Command{Verb: Revise, What: what}, true
	}
	return Command{}, false
}
