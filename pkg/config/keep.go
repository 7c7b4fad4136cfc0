package config

import (
	"fmt"
	"time"
)

// validateKeep reports a pass over the open pull requests that would run
// more often than their tests can be run.
func (g GitHub) validateKeep() []error {
	if g.KeepInterval < 0 || g.KeepInterval > 0 && g.KeepInterval < time.Minute {
		return []error{fmt.Errorf("github.keep_interval must be 0 (off) or at least 1m, got %s", g.KeepInterval)}
	}
	return nil
}
