package app

import (
	"testing"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/forge"
	"github.com/redfix/redfix/pkg/testenv"
)

// TestCentralPolicyCarriesTheTestSettings: languages.tests gives the
// central policy of the repositories it matches their test settings and
// whether their own file may add to them.
func TestCentralPolicyCarriesTheTestSettings(t *testing.T) {
	cfg := config.Default()
	cfg.Languages.Tests = []config.LanguageTests{
		{Pattern: "acme/luxon", Settings: testenv.Settings{Env: map[string]string{"TZ": "America/New_York"}}, Locked: true},
		{Pattern: "acme/*", Settings: testenv.Settings{Args: []string{"--doctest-modules"}}},
	}
	opt := newForkOptIns(cfg, forge.New())
	if c := centralPolicy(cfg, opt, "acme/luxon"); c.Tests.String() != "env TZ=America/New_York" || !c.TestsLocked {
		t.Errorf("acme/luxon: %+v, locked %v", c.Tests, c.TestsLocked)
	}
	if c := centralPolicy(cfg, opt, "acme/x"); c.Tests.String() != "args --doctest-modules" || c.TestsLocked {
		t.Errorf("acme/x: %+v, locked %v", c.Tests, c.TestsLocked)
	}
	if c := centralPolicy(cfg, opt, "other/x"); !c.Tests.IsZero() {
		t.Errorf("other/x: %+v", c.Tests)
	}
}
