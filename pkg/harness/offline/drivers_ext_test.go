package offline_test

import (
	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/harness/offline"
	"github.com/redfix/redfix/pkg/lang/all"
)

// newPolicy is the policy with the languages of every registered driver,
// as the wiring makes it.
func newPolicy(log *zap.Logger) *offline.Policy {
	return offline.New(log, all.Drivers(config.Languages{}, 0, nil))
}
