// Package series holds the values of the dashboard's history: the events
// counted by day (per repository, some with a class), a day's counts, and
// the recent pull requests and triage failures. The store keeps them; the
// recorder (pkg/history), the ingest API and the dashboard (pkg/server)
// speak of them without knowing the store.
package series

import (
	"net/url"
	"strings"
	"time"
)

// The events counted by day, for the dashboard's history. Each is counted
// per repository, some with a class (a reason, a gate).
const (
	EventReportAccepted = "report_accepted" // a report stored for triage
	EventReportRejected = "report_rejected" // a report the ingest API refused
	EventReportTriaged  = "report_triaged"  // a report triage went through
	EventTriageFailed   = "triage_failed"   // class: invalid or gave_up
	EventQueued         = "queued"          // a failure group became a repair job
	EventDropped        = "dropped"         // class: triage's reason class
	EventPublished      = "published"       // a pull request opened (any publisher)
	EventNoPatch        = "no_patch"        // a repair found nothing that passed the gates
	EventFailed         = "failed"          // a repair the machinery failed
	EventGateRejected   = "gate_rejected"   // class: the gate
	EventRepaired       = "repaired"        // a repair that ran to its end (the cost figures' denominator)
	EventTokens         = "tokens"          // model tokens of the repairs
	EventCostMicroUSD   = "cost_micro_usd"  // model cost of the repairs, in millionths of a dollar
	EventReviewed       = "reviewed"        // a published fix got its first review
	EventLanded         = "landed"          // a published fix was merged
	EventClosed         = "closed_unmerged" // a published fix was closed unmerged
)

// Count is an event to count: N of it (1 when 0) for a repository, with an
// optional class.
type Count struct {
	Event, Class, Repo string
	N                  int64
}

// DayCounts are one day's counters.
type DayCounts struct {
	Day    string // YYYY-MM-DD, UTC
	Counts []Count
}

// PullRequest is a pull request redfix opened, for the dashboard's list.
type PullRequest struct {
	TaskID string    `json:"task_id"`
	Repo   string    `json:"repo"`
	URL    string    `json:"url"`
	Title  string    `json:"title,omitempty"`
	At     time.Time `json:"at"`
	// Unreviewed: no model reviewed its patch (task.Reviewed).
	Unreviewed bool `json:"unreviewed,omitempty"`
}

// TriageFailure is a report triage gave up on, with why.
type TriageFailure struct {
	Submission string    `json:"submission"`
	Repo       string    `json:"repo,omitempty"`
	Class      string    `json:"class"` // invalid or gave_up
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

// Repo is the name a repository's series are kept under: owner/name in
// lower case for a remote URL or an owner/name, the path for a local
// repository, so that a task's canonical location and a pull request's
// owner/name meet.
func Repo(repo string) string {
	if u, err := url.Parse(repo); err == nil && u.Scheme != "" && u.Host != "" {
		return strings.ToLower(strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git"))
	}
	if strings.HasPrefix(repo, "/") {
		return repo
	}
	return strings.ToLower(repo)
}
