package config

import (
	"fmt"
	"net/url"
	"path"
	"time"

	"github.com/redfix/redfix/pkg/testenv"
)

// Languages configures the language drivers: which one runs a repository's
// tests (detected from its files unless a pattern names one) and how the
// Python and Node drivers run.
type Languages struct {
	// Repos names a repository's driver ("go", "python", "node") whatever its files
	// say: the first entry whose pattern (path.Match on the repository as
	// jobs name it, "acme/*") matches wins.
	Repos []LanguageRepo `yaml:"repos"`
	// Python configures the Python driver.
	Python Python `yaml:"python"`
	// Node configures the Node driver (JavaScript and TypeScript).
	Node Node `yaml:"node"`
	// Tests are the test settings of the repositories matching a pattern:
	// the first entry whose pattern matches wins.
	Tests []LanguageTests `yaml:"tests"`
}

// LanguageTests are what the tests of the repositories matching Pattern
// need of every run (checked as a .redfix.yaml's tests: section is).
// Locked holds those repositories' own tests: sections to these settings;
// otherwise theirs are laid on them.
type LanguageTests struct {
	Pattern          string `yaml:"pattern"`
	testenv.Settings `yaml:",inline"`
	Locked           bool `yaml:"locked"`
}

// TestsFor is the entry of languages.tests for repo (path.Match on the
// repository as jobs name it), ok false when none matches.
func (l Languages) TestsFor(repo string) (LanguageTests, bool) {
	for _, t := range l.Tests {
		if m, _ := path.Match(t.Pattern, repo); m {
			return t, true
		}
	}
	return LanguageTests{}, false
}

// LanguageRepo names the driver of the repositories matching Pattern.
type LanguageRepo struct {
	Pattern string `yaml:"pattern"`
	Driver  string `yaml:"driver"`
}

// Python configures the Python driver.
type Python struct {
	// Interpreter runs the repositories' tests: a path or a name on PATH.
	// Empty is Debian's /usr/bin/python3 where it exists.
	Interpreter string `yaml:"interpreter"`
	// IndexURL is the package index the setup step installs dependencies
	// from (pip's --index-url); empty leaves it to pip.
	IndexURL string `yaml:"index_url"`
	// AllowSdists lets the setup step build source distributions. Off (the
	// default) pip installs wheels only: building an sdist runs its build
	// backend, code of the package's choosing, with the network.
	AllowSdists bool `yaml:"allow_sdists"`
	// Pyflakes is the linter of the static checks; empty finds pyflakes3.
	Pyflakes string `yaml:"pyflakes"`
	// SetupTimeout bounds each setup command (a pip install); 0 is the
	// sandbox's default.
	SetupTimeout time.Duration `yaml:"setup_timeout"`
}

// Node configures the Node driver: JavaScript and TypeScript repositories
// tested with jest, vitest, mocha or node:test.
type Node struct {
	// Node runs the repositories' tests and tools: a path or a name on
	// PATH; empty is node on PATH.
	Node string `yaml:"node"`
	// CacheDir holds the installed node_modules (one per lockfile, shown
	// to test runs read-only) and the package managers' download caches,
	// shared by the repositories' jobs; empty is sandbox.cache_dir's node
	// directory. The package manager is always the lockfile's.
	CacheDir string `yaml:"cache_dir"`
	// Registry is the package registry setup installs from (passed to the
	// package manager); a lockfile or package.json taking a package from
	// anywhere else is refused before any install. Empty is npm's own
	// configured default.
	Registry string `yaml:"registry"`
	// InstallScripts lets packages' install scripts run during setup
	// (preinstall, install, postinstall). Off, they never run: a
	// dependency needing one to build fails its tests instead.
	InstallScripts bool `yaml:"install_scripts"`
	// SetupTimeout bounds each setup command (an npm ci); 0 is the
	// sandbox's default. CheckTimeout bounds each static check (tsc,
	// eslint); 0 is the sandbox's default.
	SetupTimeout time.Duration `yaml:"setup_timeout"`
	CheckTimeout time.Duration `yaml:"check_timeout"`
}

// knownDrivers are the drivers a configuration may name.
var knownDrivers = map[string]bool{"go": true, "python": true, "node": true}

func (l Languages) validate() []error {
	var errs []error
	for i, r := range l.Repos {
		if _, err := path.Match(r.Pattern, ""); err != nil || r.Pattern == "" {
			errs = append(errs, fmt.Errorf("languages.repos[%d].pattern %q is not a pattern", i, r.Pattern))
		}
		if !knownDrivers[r.Driver] {
			errs = append(errs, fmt.Errorf("languages.repos[%d].driver must be go, python or node, got %q", i, r.Driver))
		}
	}
	for i, t := range l.Tests {
		if _, err := path.Match(t.Pattern, ""); err != nil || t.Pattern == "" {
			errs = append(errs, fmt.Errorf("languages.tests[%d].pattern %q is not a pattern", i, t.Pattern))
		}
		errs = append(errs, t.Check(fmt.Sprintf("languages.tests[%d]", i))...)
	}
	if l.Python.SetupTimeout < 0 {
		errs = append(errs, fmt.Errorf("languages.python.setup_timeout must not be negative, got %s", l.Python.SetupTimeout))
	}
	errs = append(errs, l.Node.validate()...)
	return errs
}

func (n Node) validate() []error {
	var errs []error
	if n.SetupTimeout < 0 {
		errs = append(errs, fmt.Errorf("languages.node.setup_timeout must not be negative, got %s", n.SetupTimeout))
	}
	if n.CheckTimeout < 0 {
		errs = append(errs, fmt.Errorf("languages.node.check_timeout must not be negative, got %s", n.CheckTimeout))
	}
	if n.Registry != "" {
		u, err := url.Parse(n.Registry)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			shown := n.Registry
			if err == nil && u.User != nil {
				shown = u.Redacted()
			}
			errs = append(errs, fmt.Errorf("languages.node.registry must be an http or https URL with a host and no credentials (npm's configuration holds those), query or fragment, got %q", shown))
		}
	}
	return errs
}
