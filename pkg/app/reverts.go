package app

import (
	"path/filepath"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/command"
	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
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
// on the repository's forge through pub, with the central revert policy. nil when reverts
// are off. The policy is made in one place, revertPolicy, where a
// repository's own narrowing joins it.
func newReverter(cfg config.Config, st revertStore, forges *forge.Forges, pub *publish.Forge, mirrors *workspace.Mirrors, drivers *lang.Drivers, log *zap.Logger) *revert.Reverter {
	if !cfg.Revert.Enabled || st == nil || pub == nil {
		return nil
	}
	return &revert.Reverter{
		Policy:    revertPolicy(cfg, nil),
		Ledger:    st,
		Fixes:     st,
		Changes:   forges,
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

// commandReverter opens the reverts people ask for (/redfix revert): the
// System's Reverter when one was set, else the configuration's, with
// mirrors of its own (a mirror cache is one process's, and one cache's
// per directory). nil when reverts are off.
func (s *System) commandReverter(cfg config.Config) command.Reverter {
	if s.Reverter != nil {
		return s.Reverter
	}
	if len(s.Forges.Drivers()) == 0 || !cfg.Revert.Enabled {
		return nil
	}
	drivers, err := languages(cfg, s.log)
	if err != nil {
		s.log.Warn("reverts on request are off: the language drivers", zap.Error(err))
		return nil
	}
	mirrors := ownMirrors(cfg, s.Forges, "reverts")
	log := s.log.Named("revert")
	if r := newReverter(cfg, s.Store, s.Forges, publish.NewForge(s.Forges, mirrors, drivers, log), mirrors, drivers, log); r != nil {
		return r
	}
	return nil
}
