package all

import (
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/config"
)

// The registered drivers, and the configuration's overrides, an unknown
// driver refused with the ones it could have named.
func TestNew(t *testing.T) {
	var cfg config.Languages
	d, err := New(cfg, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.Names(), " "); got != "go node python" {
		t.Errorf("drivers = %s", got)
	}
	cfg.Repos = []config.LanguageRepo{{Pattern: "acme/*", Driver: "cobol"}}
	if _, err := New(cfg, time.Minute); err == nil || !strings.Contains(err.Error(), "go, node, python") {
		t.Errorf("an override naming no driver: %v", err)
	}
}
