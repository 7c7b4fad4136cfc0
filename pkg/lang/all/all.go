// Package all is where the language drivers are registered: the one list
// the wiring asks for a configuration's drivers. A new language is its
// driver package (pkg/lang/<name>) and one line in Drivers; nothing else
// of redfix names it (test/architecture keeps it so).
package all

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
)

// Drivers are the drivers of the configuration, in order of preference
// when two detect a checkout as strongly. tests bounds each test command
// a driver runs; log takes the drivers' warnings (nil drops them).
func Drivers(cfg config.Languages, tests time.Duration, log *zap.Logger) []lang.Driver {
	py, nd := cfg.Python, cfg.Node
	return []lang.Driver{
		golang.Driver{Tests: golang.Runner{Timeout: tests}, CheckTimeout: 3 * time.Minute},
		python.Driver{Python: py.Interpreter, IndexURL: py.IndexURL, AllowSdists: py.AllowSdists, Pyflakes: py.Pyflakes, Timeout: tests, SetupTimeout: py.SetupTimeout, Log: log},
		node.Driver{Node: nd.Node, CacheDir: nd.CacheDir, Registry: nd.Registry, InstallScripts: nd.InstallScripts, Timeout: tests, SetupTimeout: nd.SetupTimeout, CheckTimeout: nd.CheckTimeout},
	}
}

// New is the configuration's drivers, with the repositories it names for a
// driver whatever their files say.
func New(cfg config.Languages, tests time.Duration, log *zap.Logger) (*lang.Drivers, error) {
	d := lang.New(Drivers(cfg, tests, log)...)
	for _, r := range cfg.Repos {
		if err := d.Override(r.Pattern, r.Driver); err != nil {
			return nil, fmt.Errorf("configure languages: %w", err)
		}
	}
	return d, nil
}

// Logs reads CI jobs' logs with the console readers of every registered
// driver (those that have one): what a forge asks of a failed job's log
// when the run uploaded no test report.
func Logs() joblog.Readers {
	return joblog.Of(Drivers(config.Languages{}, 0, nil))
}
