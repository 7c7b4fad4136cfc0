package node

import (
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testenv"
)

// refusedOptions are the runners' options (vitest's, jest's, mocha's and
// node:test's, whichever the repository uses) a repository may not add,
// and why: redfix sets them, or they change which tests run, or whether
// the runner runs them at all.
var refusedOptions = testenv.Refuse(
	testenv.Refusal{Why: "redfix sets it: it reads the runner's report from where its own reporter writes it",
		Options: []string{"--reporter", "--reporters", "-R", "--outputFile", "--json", "--test-reporter", "--test-reporter-destination", "--cacheDirectory", "--coverage", "--collectCoverage", "--coverageDirectory", "--coverageReporters", "--experimental-test-coverage", "--rootDir", "--root", "--dir"}},
	testenv.Refusal{Why: "it chooses which tests run, or stops before all have: which tests run is redfix's to say",
		Options: []string{"--testNamePattern", "-t", "--grep", "-g", "--fgrep", "-f", "--invert", "--test-name-pattern", "--test-skip-pattern", "--test-only", "--only", "--bail", "-b", "--onlyChanged", "-o", "--changed", "--changedSince", "--lastCommit", "--findRelatedTests", "--related", "--testPathPattern", "--testPathPatterns", "--shard", "--selectProjects", "--project"}},
	testenv.Refusal{Why: "the runner would run no test, or wait for a person",
		Options: []string{"--watch", "--watchAll", "-w", "--listTests", "--showConfig", "--help", "-h", "--version", "-v", "--dry-run", "--inspect", "--inspect-brk", "--ui"}},
)

// WithTests is d running every test runner's process with s's variables
// (over the driver's own CI=true, NO_COLOR=1, FORCE_COLOR=0,
// NODE_ENV=test) and options (after redfix's, before the tests); setup
// installs the lockfile whole, whatever s.DependencyGroups says.
func (d Driver) WithTests(s testenv.Settings) (lang.Driver, error) {
	if err := testenv.CheckOptions(s.Args, refusedOptions); err != nil {
		return nil, err
	}
	d.TestEnv = s.Environ()
	d.TestArgs = append([]string(nil), s.Args...)
	return d, nil
}
