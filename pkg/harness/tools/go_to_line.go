package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
)

// GoToLine is the tool that shows the lines of a file around one.
const GoToLine = "go_to_line"

// GoToLineArgs are go_to_line's arguments.
type GoToLineArgs struct {
	Path string `json:"path" description:"File path relative to the repository root."`
	Line int    `json:"line" description:"The line to center on (1-based)."`
}

//go:embed go_to_line.md
var goToLineDoc string

var goToLineTool = Define(GoToLine, KindListing, goToLineDoc, (*Session).goToLine)

// goToLineWindow is how many lines go_to_line shows.
const goToLineWindow = 50

func (s *Session) goToLine(ctx context.Context, args GoToLineArgs) (Observation, error) {
	content, rel, bad := s.readText(ctx, args.Path)
	if bad != nil {
		return *bad, nil
	}
	lines := splitLines(content)
	total := len(lines)
	if args.Line < 1 || args.Line > total {
		return problem("%s has %s; line %d is not in it.", rel, plural(total, "line", "lines"), args.Line), nil
	}
	from := max(args.Line-goToLineWindow/2, 1)
	to := min(from+goToLineWindow-1, total)
	from = max(to-goToLineWindow+1, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), lines %d-%d around line %d:\n", rel, plural(total, "line", "lines"), from, to, args.Line)
	listing := &ListingResult{Path: rel, Total: total}
	for n := from; n <= to; n++ {
		listing.line(&b, n, lines[n-1])
	}
	return Observation{Content: b.String(), Listing: listing}, nil
}
