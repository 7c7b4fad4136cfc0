package app

import (
	"fmt"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/forge/gitremote"
	"github.com/redfix/redfix/pkg/publish"
)

// gitRemoteDriver is the plain git remotes' driver of the configuration
// (git_remotes): nil, as a forge.Driver, when none is configured.
func gitRemoteDriver(cfg config.Config) (forge.Driver, error) {
	if len(cfg.GitRemotes) == 0 {
		return nil, nil
	}
	d, err := gitremote.New(cfg.Remotes()...)
	if err != nil {
		return nil, fmt.Errorf("git_remotes: %w", err)
	}
	return d, nil
}

// deliveryWays decide, where reports come in, whether each repository's
// fix can be delivered, as the workers' publisher will deliver it
// (newPipeline: on forges when publishesOnForges, else locally).
func deliveryWays(cfg config.Config, forges *forge.Forges) publish.Ways {
	return publish.Ways{Forges: forges, OnForges: publishesOnForges(cfg, forges)}
}
