package app

import (
	"path/filepath"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/keep"
)

// Keeper is the pass over redfix's open pull requests that `bot serve`
// runs every github.keep_interval (keep.Keeper), once per interval
// between the bot's replicas: a pull request whose failing tests pass on
// the default branch without it, or whose change conflicts with what
// landed there since, is closed with a comment saying why, on its forge.
// Nil when no forge is configured or the interval is 0.
//
// The pass runs in the bot, beside triage, because it does what triage's
// reproduction does: the failing tests at a commit of the default branch,
// in a fresh work tree, through the repository's language driver, in the
// sandbox the process was given (ctx's); the conflict check is redfix's
// own git in a bare mirror. It has its own mirrors (a mirror cache tracks
// its work trees in its own process only).
func (s *System) Keeper(cfg config.Config) (*keep.Keeper, error) {
	if len(s.Forges.Drivers()) == 0 || cfg.GitHub.KeepInterval <= 0 {
		return nil, nil
	}
	langs, err := languages(cfg, s.log)
	if err != nil {
		return nil, err
	}
	return &keep.Keeper{
		Fixes: s.Store, Forges: s.Forges, Checkouts: ownMirrors(cfg, s.Forges, "keep"), Languages: langs,
		WorkDir: filepath.Join(cfg.DataDir, "workspaces"), Log: s.log.Named("keep"),
		// The bot's replicas make the pass once per interval between them.
		Turns: s.Store, Owner: processOwner(),
		// Tests that failed at a head are not run again at it.
		Kept: s.Store,
	}, nil
}
