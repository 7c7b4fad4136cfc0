package config

import (
	"fmt"
	"path"
	"time"
)

// Languages configures the language drivers: which one runs a repository's
// tests (detected from its files unless a pattern names one) and how the
// Python driver runs.
type Languages struct {
	// Repos names a repository's driver ("go", "python") whatever its files
	// say: the first entry whose pattern (path.Match on the repository as
	// jobs name it, "acme/*") matches wins.
	Repos []LanguageRepo `yaml:"repos"`
	// Python configures the Python driver.
	Python Python `yaml:"python"`
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
	// Pyflakes is the linter of the static checks; empty finds pyflakes3.
	Pyflakes string `yaml:"pyflakes"`
	// SetupTimeout bounds each setup command (a pip install); 0 is the
	// sandbox's default.
	SetupTimeout time.Duration `yaml:"setup_timeout"`
}

// knownDrivers are the drivers a configuration may name.
var knownDrivers = map[string]bool{"go": true, "python": true}

func (l Languages) validate() []error {
	var errs []error
	for i, r := range l.Repos {
		if _, err := path.Match(r.Pattern, ""); err != nil || r.Pattern == "" {
			errs = append(errs, fmt.Errorf("languages.repos[%d].pattern %q is not a pattern", i, r.Pattern))
		}
		if !knownDrivers[r.Driver] {
			errs = append(errs, fmt.Errorf("languages.repos[%d].driver must be go or python, got %q", i, r.Driver))
		}
	}
	if l.Python.SetupTimeout < 0 {
		errs = append(errs, fmt.Errorf("languages.python.setup_timeout must not be negative, got %s", l.Python.SetupTimeout))
	}
	return errs
}
