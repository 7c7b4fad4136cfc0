package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
)

// ReadFile is the tool that shows a file, or a range of its lines, numbered.
const ReadFile = "read_file"

// ReadFileArgs are read_file's arguments: lines are 1-based and inclusive;
// 0 means the file's start or end.
type ReadFileArgs struct {
	Path      string `json:"path" description:"File path relative to the repository root."`
	StartLine int    `json:"start_line,omitempty" description:"First line to show (1-based); 0 means the start."`
	EndLine   int    `json:"end_line,omitempty" description:"Last line to show (inclusive); 0 means the end."`
}

//go:embed read_file.md
var readFileDoc string

var readFileTool = Define(ReadFile, KindListing, readFileDoc, (*Session).readFile)

// Lines read_file shows without a range, and for an explicit range.
const (
	readFileLines  = 250
	readRangeLines = 600
)

func (s *Session) readFile(ctx context.Context, args ReadFileArgs) (Observation, error) {
	content, rel, bad := s.readText(ctx, args.Path)
	if bad != nil {
		return *bad, nil
	}
	lines := splitLines(content)
	total := len(lines)
	if total == 0 {
		return Observation{Content: fmt.Sprintf("%s is empty.", rel), Listing: &ListingResult{Path: rel}}, nil
	}
	from, to := args.StartLine, args.EndLine
	ranged := from > 0 || to > 0
	if from <= 0 {
		from = 1
	}
	if to <= 0 || to > total {
		to = total
	}
	if from > total {
		return problem("%s has %s; start_line %d is past its end.", rel, plural(total, "line", "lines"), from), nil
	}
	if from > to {
		return problem("start_line %d is after end_line %d.", from, to), nil
	}
	capLines := readFileLines
	if ranged {
		capLines = readRangeLines
	}
	to = min(to, from+capLines-1)
	// Stay within the observation limit, so that the loop never cuts the
	// middle of a listing.
	budget := s.env.OutputLimit - 400
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), lines %d-%d:\n", rel, plural(total, "line", "lines"), from, to)
	listing := &ListingResult{Path: rel, Total: total}
	shownTo := from - 1
	for n := from; n <= to; n++ {
		line := fmt.Sprintf("%6d\t%s\n", n, lines[n-1])
		if b.Len()+len(line) > budget && n > from {
			break
		}
		listing.line(&b, n, lines[n-1])
		shownTo = n
	}
	wanted := total
	if args.EndLine > 0 {
		wanted = min(args.EndLine, total)
	}
	if shownTo < wanted {
		fmt.Fprintf(&b, "[Shown: lines %d-%d of %d. Call read_file with start_line=%d to read on.]\n", from, shownTo, total, shownTo+1)
	}
	return Observation{Content: b.String(), Listing: listing}, nil
}
