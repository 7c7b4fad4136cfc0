package triage

import "strings"

// The classes of the reasons triage drops a failure group for: a bounded
// set, fit for a metric label and a dashboard's table.
const (
	ReasonFlaky         = "flaky"          // it passed on a rerun, or at this commit before
	ReasonNotReproduced = "not_reproduced" // it passed every rerun here
	ReasonDuplicate     = "duplicate"      // another task has the group
	ReasonEndedUnfixed  = "ended_unfixed"  // the group's task ended without a fix; its verdict holds (triage.verdict_ttl)
	ReasonSameBlame     = "same_blame"     // another task has the commit that broke it
	ReasonCannotRun     = "cannot_run"     // its tests or package could not be named, run or built here
	ReasonOptedOut      = "opted_out"      // the repository opted out
	ReasonFork          = "fork"           // a pull request from a fork, which the configuration does not handle
	ReasonBudget        = "budget"         // the repository's daily job budget is used up
	ReasonFixed         = "already_fixed"  // it passes at the default branch's head
	ReasonHumanFix      = "human_fix"      // a person's pull request is in flight
	ReasonBeyondCap     = "beyond_cap"     // the report's groups past the cap per report (one outcome for them all)
	ReasonOther         = "other"
)

// ReasonClasses lists every class ReasonClass returns.
var ReasonClasses = []string{ReasonFlaky, ReasonNotReproduced, ReasonDuplicate, ReasonEndedUnfixed, ReasonSameBlame, ReasonCannotRun, ReasonOptedOut, ReasonFork, ReasonBudget, ReasonFixed, ReasonHumanFix, ReasonBeyondCap, ReasonOther}

// ReasonClass maps a drop reason that triage wrote to its class.
func ReasonClass(reason string) string {
	switch {
	case strings.HasPrefix(reason, "flaky"):
		return ReasonFlaky
	case strings.HasPrefix(reason, "does not reproduce"):
		return ReasonNotReproduced
	case strings.HasPrefix(reason, "duplicate"):
		return ReasonDuplicate
	case strings.HasPrefix(reason, "same failure as task"):
		return ReasonEndedUnfixed
	case strings.HasPrefix(reason, "same blame commit"):
		return ReasonSameBlame
	case strings.HasPrefix(reason, "cannot run"), strings.HasPrefix(reason, "cannot build"):
		return ReasonCannotRun
	case strings.HasPrefix(reason, "repository opted out"):
		return ReasonOptedOut
	case strings.HasPrefix(reason, "pull request from a fork"):
		return ReasonFork
	case strings.HasPrefix(reason, "daily job budget"):
		return ReasonBudget
	case strings.HasPrefix(reason, "already fixed"):
		return ReasonFixed
	case strings.HasPrefix(reason, "a pull request by a person"):
		return ReasonHumanFix
	case strings.HasPrefix(reason, "the report has") && strings.Contains(reason, "beyond the cap"):
		return ReasonBeyondCap
	}
	return ReasonOther
}
