package task

import (
	"errors"
	"time"
)

// FixState is where a published pull request stands.
type FixState string

// The states of a published fix. Landed ones count for the land rate.
const (
	FixOpen            FixState = "open"
	FixLanded          FixState = "landed"            // merged as redfix wrote it
	FixLandedWithEdits FixState = "landed_with_edits" // merged after a human pushed to its branch
	FixClosed          FixState = "closed_unmerged"
)

// The kinds of pull request redfix opens: a repair the agent wrote, or
// the revert of the commit that broke the tests.
const (
	KindFix    = "fix"
	KindRevert = "revert"
)

// Fix is a pull request redfix published, and what became of it.
type Fix struct {
	Repo   string `json:"repo"` // "owner/name"
	Number int    `json:"number"`
	URL    string `json:"url"`
	// Kind is KindFix or KindRevert ("" in records older than kinds: a
	// fix).
	Kind string `json:"kind,omitempty"`
	// Revised says the fix got at least one revision on review.
	Revised          bool      `json:"revised,omitempty"`
	TaskID           string    `json:"task_id,omitempty"`
	Fingerprint      string    `json:"fingerprint,omitempty"`
	State            FixState  `json:"state"`
	Reviewed         bool      `json:"reviewed"`
	ChangesRequested bool      `json:"changes_requested"`
	PublishedAt      time.Time `json:"published_at"`
	FirstReviewAt    time.Time `json:"first_review_at,omitzero"`
	ClosedAt         time.Time `json:"closed_at,omitzero"`
	// ClosedByBot, when set, says that redfix closed the pull request
	// itself, and why (a CloseReason).
	ClosedByBot CloseReason `json:"closed_by_bot,omitempty"`
}

// CloseReason is why redfix closed one of its own pull requests.
type CloseReason string

// The reasons redfix closes its own pull requests (pkg/keep).
const (
	// CloseFixed: the failing tests pass on the default branch without
	// the change (a person fixed it).
	CloseFixed CloseReason = "fixed_on_default_branch"
	// CloseTestsGone: the failing tests no longer exist there.
	CloseTestsGone CloseReason = "tests_gone"
	// CloseConflict: the default branch moved and the change no longer
	// applies on top of it.
	CloseConflict CloseReason = "conflicts_with_default_branch"
)

// KindOf is f's kind, KindFix for a record older than kinds.
func (f Fix) KindOf() string {
	if f.Kind == "" {
		return KindFix
	}
	return f.Kind
}

// Landed reports whether the fix was merged, with or without edits.
func (f Fix) Landed() bool { return f.State == FixLanded || f.State == FixLandedWithEdits }

// ErrNoFix is returned for an outcome of a pull request that redfix did not
// record as published.
var ErrNoFix = errors.New("not a published fix")

// LandStats are the outcomes of the fixes of one repository, or of all.
type LandStats struct {
	Repo string `json:"repo,omitempty"`
	// Kind is the kind of pull request counted (Land.Kinds): KindFix,
	// KindRevert, or KindRevised (fixes that were revised on review).
	Kind            string `json:"kind,omitempty"`
	Published       int64  `json:"published"`
	Landed          int64  `json:"landed"`            // with or without edits
	LandedWithEdits int64  `json:"landed_with_edits"` // part of Landed
	ClosedUnmerged  int64  `json:"closed_unmerged"`
	// ClosedByBot are the closed unmerged ones that redfix closed itself
	// (part of ClosedUnmerged): no longer needed, or no longer applying.
	ClosedByBot      int64 `json:"closed_by_bot"`
	Open             int64 `json:"open"`
	Reviewed         int64 `json:"reviewed"`
	ChangesRequested int64 `json:"changes_requested"`
	// LandRate is Landed ÷ the pull requests decided (landed or closed
	// unmerged): nil (null in JSON) while none is decided, since open ones
	// say nothing yet.
	LandRate *float64 `json:"land_rate"`
	// Mean times from publication, in seconds (0 when none happened yet).
	MeanSecondsToFirstReview float64 `json:"mean_seconds_to_first_review"`
	MeanSecondsToLand        float64 `json:"mean_seconds_to_land"`
}

// Land is the land rate overall and per repository.
type Land struct {
	Overall LandStats   `json:"overall"`
	Repos   []LandStats `json:"repos"`
	// Kinds are the same counts for each kind of pull request apart
	// (fixes, reverts, and the fixes revised on review), so that the land
	// rate of each can be read.
	Kinds []LandStats `json:"kinds"`
}

// KindRevised counts, among the kinds' stats, the fixes that got at least
// one revision on review (a fix is counted both as a fix and as revised).
const KindRevised = "revised"
