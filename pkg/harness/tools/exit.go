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
}

//go:embed exit.md
var exitDoc string

var exitTool = Define(Exit, KindExit, exitDoc, (*Session).exit)

func (s *Session) exit(_ context.Context, args ExitArgs) (Observation, error) {
	summary := strings.TrimSpace(args.Summary)
	s.exited = &summary
	return Observation{Content: "The episode ends."}, nil
}
