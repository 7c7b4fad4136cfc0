package app

import (
	"time"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/all"
)

// testTimeout bounds each test command a driver runs.
const testTimeout = 10 * time.Minute

// languages is the language drivers of the configuration (pkg/lang/all),
// with the repositories it names for a driver.
func languages(cfg config.Config) (*lang.Drivers, error) {
	return all.New(cfg.Languages, testTimeout)
}
