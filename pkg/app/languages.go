package app

import (
	"fmt"
	"time"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
)

// testTimeout bounds each test command a driver runs.
const testTimeout = 10 * time.Minute

// languages is the language drivers of the configuration: Go, Python and
// Node, in that order on a tie, with the repositories it names for a
// driver.
func languages(cfg config.Config) (*lang.Drivers, error) {
	py, nd := cfg.Languages.Python, cfg.Languages.Node
	d := lang.New(
		golang.Driver{Tests: golang.Runner{Timeout: testTimeout}, CheckTimeout: 3 * time.Minute},
		python.Driver{Python: py.Interpreter, IndexURL: py.IndexURL, AllowSdists: py.AllowSdists, Pyflakes: py.Pyflakes, Timeout: testTimeout, SetupTimeout: py.SetupTimeout},
		node.Driver{Node: nd.Node, CacheDir: nd.CacheDir, Registry: nd.Registry, InstallScripts: nd.InstallScripts, Timeout: testTimeout, SetupTimeout: nd.SetupTimeout, CheckTimeout: nd.CheckTimeout},
	)
	for _, r := range cfg.Languages.Repos {
		if err := d.Override(r.Pattern, r.Driver); err != nil {
			return nil, fmt.Errorf("configure languages: %w", err)
		}
	}
	return d, nil
}
