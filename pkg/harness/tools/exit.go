package tools

import (
	"context"
	_ "embed"
	"strings"
)

// Exit is the tool that ends the episode with a summary.
const Exit = "exit"

// ExitArgs are exit's arguments.
type ExitArgs struct {
	Summary string `json:"summary" description:"What was wrong and what you changed, or why you stop without a fix."`
	// RevertPasses: no fix was found, but undoing the blame commit's
	// change made the failing tests pass (the change was then undone):
	// an answer for a revert, told apart from finding nothing.
	RevertPasses bool `json:"revert_passes,omitempty" description:"Set when you found no fix but undoing the blame commit's change made the failing tests pass: a revert is the answer to offer."`
}

//go:embed exit.md
var exitDoc string

var exitTool = Define(Exit, KindExit, exitDoc, (*Session).exit)

func (s *Session) exit(_ context.Context, args ExitArgs) (Observation, error) {
	summary := strings.TrimSpace(args.Summary)
	s.exited = &summary
	s.revertPasses = args.RevertPasses
	return Observation{Content: "The episode ends."}, nil
}
