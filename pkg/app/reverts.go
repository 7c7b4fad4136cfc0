package app

import (
	"path/filepath"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/publish"
	"github.com/redfix/redfix/pkg/revert"
	"github.com/redfix/redfix/pkg/workspace"
)

// revertStore is what reverts keep in the store (store.Store).
type revertStore interface {
	revert.Ledger
	revert.Fixes
	revert.Tasks
}

// newReverter is the reverter of the configuration: revert pull requests
// on GitHub through pub, with the central revert policy. nil when reverts
// are off. The policy is made in one place, revertPolicy, where a
// repository's own narrowing joins it.
func newReverter(cfg config.Config, st revertStore, pub *publish.GitHub, mirrors *workspace.Mirrors, drivers *lang.Drivers, log *zap.Logger) *revert.Reverter {
	if !cfg.Revert.Enabled || st == nil || pub == nil {
		return nil
	}
	return &revert.Reverter{
		Policy:    revertPolicy(cfg, nil),
		Ledger:    st,
		Fixes:     st,
		Tasks:     st,
		Publisher: pub,
		Checkouts: mirrors,
		Languages: drivers,
		WorkDir:   filepath.Join(cfg.DataDir, "workspaces"),
		Log:       log.Named("revert"),
	}
}

// revertPolicy is the revert policy: the central configuration's, with
// firstPaths the repository's revert-first globs (.redfix.yaml's
// revert.first_paths; nil without one).
func revertPolicy(cfg config.Config, firstPaths []string) revert.Policy {
	return revert.NewPolicy(cfg.Revert.Enabled, cfg.Revert.MaxAge, cfg.Revert.MinConfidence, firstPaths)
}
