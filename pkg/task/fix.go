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

// Fix is a pull request redfix published, and what became of it.
type Fix struct {
	Repo             string    `json:"repo"` // "owner/name"
	Number           int       `json:"number"`
	URL              string    `json:"url"`
	TaskID           string    `json:"task_id,omitempty"`
	Fingerprint      string    `json:"fingerprint,omitempty"`
	State            FixState  `json:"state"`
	Reviewed         bool      `json:"reviewed"`
	ChangesRequested bool      `json:"changes_requested"`
	PublishedAt      time.Time `json:"published_at"`
	FirstReviewAt    time.Time `json:"first_review_at,omitzero"`
	ClosedAt         time.Time `json:"closed_at,omitzero"`
}

// Landed reports whether the fix was merged, with or without edits.
func (f Fix) Landed() bool { return f.State == FixLanded || f.State == FixLandedWithEdits }

// ErrNoFix is returned for an outcome of a pull request that redfix did not
// record as published.
var ErrNoFix = errors.New("not a published fix")

// LandStats are the outcomes of the fixes of one repository, or of all.
type LandStats struct {
	Repo             string `json:"repo,omitempty"`
	Published        int64  `json:"published"`
	Landed           int64  `json:"landed"`            // with or without edits
	LandedWithEdits  int64  `json:"landed_with_edits"` // part of Landed
	ClosedUnmerged   int64  `json:"closed_unmerged"`
	Open             int64  `json:"open"`
	Reviewed         int64  `json:"reviewed"`
	ChangesRequested int64  `json:"changes_requested"`
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
}
