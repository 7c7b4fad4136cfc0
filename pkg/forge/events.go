package forge

import (
	"context"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/report"
)

// Comment is a comment someone wrote on a change request or an issue, as
// a forge's event brings it in.
type Comment struct {
	Repo RepoID
	// Number is the change request's or the issue's.
	Number int
	// OnChangeRequest tells a change request's thread from an issue's.
	OnChangeRequest bool
	// ID is the forge's id of the comment.
	ID     int64
	Author User
	Body   string
}

// ReviewState is what a review of a change request concluded.
type ReviewState string

// The review states redfix tells apart.
const (
	ReviewApproved         ReviewState = "approved"
	ReviewChangesRequested ReviewState = "changes_requested"
	ReviewCommented        ReviewState = "commented"
)

// Review is a review submitted on a change request.
type Review struct {
	Repo   RepoID
	Number int
	Author User
	// State is in lower case; a forge's other states pass as it says them.
	State ReviewState
	Body  string
	At    time.Time
}

// Report is a failed CI run's test report, as a forge's events bring it
// in: what triage takes like a report CI posted.
type Report struct {
	// ID names the run across the events that bring it (a redelivery, a
	// resync), so that it is triaged once.
	ID string
	// Repo is the repository's clone URL, Commit the run's, Good the
	// last green commit the forge knows ("" when none), Branch the run's.
	Repo, Commit, Good, Branch string
	// Fork is the head repository of a run that tested a change request
	// from a fork ("" for the repository's own commits).
	Fork string
	// Data is the report as CI wrote it; Parsed the same, as it was read
	// while collecting it.
	Data   []byte
	Parsed *report.Result
}

// Processed is what came of a stored event of a forge: a report for
// triage, or nothing more to do (an outcome recorded, a command answered).
type Processed struct {
	// Report is nil when there is nothing to triage.
	Report *Report
	// Release gives up the claim on the run, when its triage fails for
	// good, so that a later event may try again; nil when nothing was
	// claimed.
	Release func(ctx context.Context)
	// Note says what was done, for the log.
	Note string
}

// CommandPrefix starts every command to redfix in a comment.
const CommandPrefix = "/redfix"

// IsCommand reports whether a comment's first line is addressed to redfix:
// "/redfix" alone or followed by a space. Which command, and whether its
// author may give it, is decided when the comment is acted on.
func IsCommand(body string) bool {
	line, _, _ := strings.Cut(strings.TrimLeft(body, " \t"), "\n")
	line = strings.TrimRight(line, " \t\r")
	rest, ok := strings.CutPrefix(line, CommandPrefix)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}
