package app

import (
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/all"
)

// testTimeout bounds each test command a driver runs.
const testTimeout = 10 * time.Minute

// languages is the language drivers of the configuration (pkg/lang/all),
// with the repositories it names for a driver; log takes the drivers'
// warnings (nil drops them).
func languages(cfg config.Config, log *zap.Logger) (*lang.Drivers, error) {
	if log != nil {
		log = log.Named("lang")
	}
	return all.New(cfg.Languages, testTimeout, log)
}
