package node

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Runners.
const (
	vitest   = "vitest"
	jest     = "jest"
	mocha    = "mocha"
	nodeTest = "node"
)

// runnerOf is the runner of the checkout at dir: the one its package.json
// names (its test script, then its dependencies), else the one a
// configuration file at the root is for, else node:test.
func runnerOf(dir string) string {
	pkg, err := readPackageJSON(dir)
	if err == nil {
		if r := pkg.runner(); r != "" {
			return r
		}
		if len(pkg.Jest) > 0 {
			return jest
		}
		if len(pkg.Mocha) > 0 {
			return mocha
		}
	}
	if ents, err := untrusted.ReadDir(dir, "."); err == nil {
		for _, e := range ents {
			for _, c := range []struct{ prefix, runner string }{
				{"vitest.config.", vitest}, {"vitest.workspace.", vitest}, {"jest.config.", jest}, {".mocharc", mocha},
			} {
				if strings.HasPrefix(e.Name(), c.prefix) {
					return c.runner
				}
			}
		}
	}
	return nodeTest
}

// entries are the runners' scripts in node_modules.
var entries = map[string]string{
	vitest: "vitest/vitest.mjs",
	jest:   "jest/bin/jest.js",
	mocha:  "mocha/bin/mocha.js",
}

// reportName is the report a runner's invocation writes into the outbox.
func reportName(name string) string { return "report-" + name + ".json" }

// neverMatches is a name pattern no test's name matches: the files load
// and declare their tests, none of which runs.
const neverMatches = "^redfix: load only, run no test$"

// command is the command line that runs the runner on targets (files,
// directories, or tests: those of one file's run by a name pattern),
// writing its report as reportName(name) into the outbox. collect loads
// the files and runs no test (Build, List).
func (s *session) command(runner, name string, targets []testrun.Target, collect bool) ([]string, []string, error) {
	report := filepath.Join(s.outbox, reportName(name))
	paths, pattern := selection(runner, targets, s.titles)
	if collect {
		pattern = neverMatches
	}
	var args []string
	// The repository's variables (WithTests) come before the runner's
	// own, which win; its options follow redfix's, before the selection.
	env := append([]string(nil), s.d.TestEnv...)
	extra := s.d.TestArgs
	switch runner {
	case vitest:
		args = []string{s.node, s.bin(entries[vitest]), "run", "--reporter=json", "--outputFile=" + report, "--passWithNoTests", "--watch=false"}
		args = append(args, extra...)
		if pattern != "" {
			args = append(args, "--testNamePattern="+pattern)
		}
		for _, p := range paths {
			if p != "." {
				args = append(args, p)
			}
		}
	case jest:
		args = []string{s.node, s.bin(entries[jest]), "--ci", "--json", "--outputFile=" + report, "--testLocationInResults",
			"--passWithNoTests", "--watchman=false", "--color=false", "--cacheDirectory=/tmp/jest-cache"}
		args = append(args, extra...)
		if pattern != "" {
			args = append(args, "--testNamePattern="+pattern)
		}
		var files, dirs []string
		for _, p := range paths {
			if p == "." {
				dirs = nil
				files = nil
				break
			}
			if isSourceExt(path.Ext(p)) {
				files = append(files, p)
			} else {
				dirs = append(dirs, regexp.QuoteMeta(filepath.Join(s.dir, p)+"/"))
			}
		}
		switch {
		case len(files) > 0 && len(dirs) == 0:
			args = append(args, "--runTestsByPath")
			args = append(args, files...)
		case len(files)+len(dirs) > 0:
			for _, f := range files {
				dirs = append(dirs, regexp.QuoteMeta(filepath.Join(s.dir, f))+"$")
			}
			args = append(args, dirs...)
		}
	case mocha:
		reporter, err := s.write("redfix-mocha-reporter.cjs", mochaReporter)
		if err != nil {
			return nil, nil, err
		}
		args = []string{s.node, s.bin(entries[mocha]), "--reporter", reporter, "--no-color"}
		args = append(args, extra...)
		if collect {
			args = append(args, "--dry-run")
			pattern = ""
		}
		if pattern != "" {
			args = append(args, "--grep", pattern)
		}
		for _, p := range paths {
			if p == "." {
				continue
			}
			if isSourceExt(path.Ext(p)) {
				args = append(args, p)
			} else {
				args = append(args, "--recursive", p)
			}
		}
		env = append(env, "REDFIX_REPORT="+report)
	case nodeTest:
		reporter, err := s.write("redfix-node-reporter.mjs", nodeReporter)
		if err != nil {
			return nil, nil, err
		}
		args = []string{s.node, "--test", "--test-reporter=" + reporter, "--test-reporter-destination=" + report}
		args = append(args, extra...)
		if pattern != "" {
			args = append(args, "--test-name-pattern="+pattern)
		}
		for _, p := range paths {
			if p != "." {
				args = append(args, p)
			}
		}
	default:
		return nil, nil, fmt.Errorf("node: no runner %q", runner)
	}
	return args, env, nil
}
