package config

import (
	"fmt"
	"time"
)

// Revert configures revert pull requests: when a repair produced nothing
// that passed the gates, the commit triage blamed is reverted instead,
// if triage was sure enough of it and it is recent.
type Revert struct {
	// Enabled allows revert pull requests (default true).
	Enabled bool `yaml:"enabled"`
	// MaxAge is the oldest culprit reverted, by its committer time
	// (default 24h): an older commit has had others built on it.
	MaxAge time.Duration `yaml:"max_age"`
	// MinConfidence is the least confidence of triage's bisection in the
	// culprit (0..1, default 0.9).
	MinConfidence float64 `yaml:"min_confidence"`
}

// defaultRevert is Revert's defaults.
var defaultRevert = Revert{Enabled: true, MaxAge: 24 * time.Hour, MinConfidence: 0.9}

// validate lists what is wrong with r.
func (r Revert) validate() []error {
	var errs []error
	if r.MaxAge <= 0 {
		errs = append(errs, fmt.Errorf("revert.max_age must be positive, got %s", r.MaxAge))
	}
	if r.MinConfidence < 0 || r.MinConfidence > 1 {
		errs = append(errs, fmt.Errorf("revert.min_confidence must be between 0 and 1, got %v", r.MinConfidence))
	}
	return errs
}
