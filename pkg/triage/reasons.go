package triage

import "strings"

// The classes of the reasons triage drops a failure group for: a bounded
// set, fit for a metric label and a dashboard's table.
const (
	ReasonFlaky         = "flaky"          // it passed on a rerun, or at this commit before
	ReasonNotReproduced = "not_reproduced" // it passed every rerun here
	ReasonDuplicate     = "duplicate"      // another task has the group
	ReasonSameBlame     = "same_blame"     // another task has the commit that broke it
	ReasonCannotRun     = "cannot_run"     // its tests or package could not be named, run or built here
	ReasonOptedOut      = "opted_out"      // the repository opted out
	ReasonOther         = "other"
)

// ReasonClasses lists every class ReasonClass returns.
var ReasonClasses = []string{ReasonFlaky, ReasonNotReproduced, ReasonDuplicate, ReasonSameBlame, ReasonCannotRun, ReasonOptedOut, ReasonOther}

// ReasonClass maps a drop reason that triage wrote to its class.
func ReasonClass(reason string) string {
	switch {
	case strings.HasPrefix(reason, "flaky"):
		return ReasonFlaky
	case strings.HasPrefix(reason, "does not reproduce"):
		return ReasonNotReproduced
	case strings.HasPrefix(reason, "duplicate"):
		return ReasonDuplicate
	case strings.HasPrefix(reason, "same blame commit"):
		return ReasonSameBlame
	case strings.HasPrefix(reason, "cannot run"), strings.HasPrefix(reason, "cannot build"):
		return ReasonCannotRun
	case strings.HasPrefix(reason, "repository opted out"):
		return ReasonOptedOut
	}
	return ReasonOther
}
