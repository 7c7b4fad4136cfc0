// Package node is the JavaScript and TypeScript driver behind the language
// seam (pkg/lang): jest, vitest, mocha and node:test for tests, the
// repository's own package manager (npm, pnpm, yarn) for its node_modules,
// tsc and eslint for the static checks, tree-sitter's JavaScript and
// TypeScript grammars for declarations.
//
// Tests are named FILE::NAME: FILE the test file's path relative to the
// checkout's root ("src/price.test.ts"), NAME its describe blocks and its
// own title joined by " > " ("price > applies the discount"). A test file,
// or a directory of them, is what the seam calls a package.
//
// Every command runs through pkg/sandbox. node_modules is installed once
// per lockfile into the driver's cache directory (the one step that may
// reach the registry) and shown to the tests read-only; what a runner
// reports is written into an outbox outside the checkout and read back
// from it as untrusted files: sized, never through a link.
package node

import (
	"encoding/json"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/untrusted"
)

// Driver runs JavaScript and TypeScript repositories' tests. The zero
// Driver uses node and the package managers on PATH, keeps node_modules
// under each repository's sandbox cache directory, runs no install script,
// and takes the sandbox's default timeouts.
type Driver struct {
	// CacheDir holds node_modules, one per lockfile, package.json, node
	// version and package manager, across jobs, and the package manager's
	// download cache. "" is "node" in the repository's sandbox cache
	// directory (sandbox.CacheDir). Test runs see it read-only.
	CacheDir string
	// Node is the node binary the tests run with: a path, or a name looked
	// up on PATH; "" is node.
	Node string
	// Registry is the registry packages are installed from, passed to the
	// package manager (--registry); a lockfile or package.json that takes
	// a package from anywhere else (a tarball URL elsewhere, git, a file
	// or link outside the checkout's workspace packages) is refused before
	// any install. "" is npm's own configured default, asked once.
	Registry string
	// InstallScripts lets the packages' install scripts (preinstall,
	// install, postinstall, prepare) run at setup. They are off by
	// default: they are code of the repository's choosing, run with the
	// network, and what they leave is shared by every job of the
	// repository (see setup.go).
	InstallScripts bool
	// Timeout bounds each runner invocation, SetupTimeout each install,
	// CheckTimeout each static check; 0 is the sandbox's default.
	Timeout, SetupTimeout, CheckTimeout time.Duration
	// MaxOutput caps the output kept of each command (0: the sandbox's
	// default). Test results are read from the runner's report, whole.
	MaxOutput int
	// TestEnv ("NAME=value") and TestArgs are the repository's test
	// settings (WithTests): every runner's process sees the variables,
	// over the driver's own defaults, and takes the options.
	TestEnv, TestArgs []string
}

// Name is "node".
func (Driver) Name() string { return "node" }

// runnerConfigs are files at a checkout's root that configure a test
// runner (the extension aside).
var runnerConfigs = []string{"vitest.config", "vitest.workspace", "jest.config", ".mocharc"}

// knownRunners are the packages of the runners the driver runs.
var knownRunners = []string{"vitest", "jest", "mocha"}

// Detect: a package.json whose tests a known runner runs (jest, vitest or
// mocha among its dependencies, a test script that names one or
// "node --test"), or a runner's configuration file at the root, is a
// strong sign: 95, below a go.mod's 100 (a Go module with JavaScript
// tooling is Go's) and above Python's 90 (a repository that declares a
// JavaScript test runner runs JavaScript tests, where pyproject.toml and
// setup.cfg are as often only tools' configuration). A package.json with
// another test script is 50; a package.json or a lockfile alone (tooling:
// prettier, husky, a docs site) 20, below Python's markers; JavaScript or
// TypeScript files at the root alone 5.
func (Driver) Detect(dir string) int {
	score := 0
	if pkg, err := readPackageJSON(dir); err == nil {
		score = 20
		if pkg.runner() != "" {
			return 95
		}
		if s := strings.TrimSpace(pkg.Scripts["test"]); s != "" && !strings.Contains(s, "no test specified") {
			score = 50
		}
	}
	ents, err := untrusted.ReadDir(dir, ".")
	if err != nil {
		return score
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		for _, c := range runnerConfigs {
			if strings.HasPrefix(name, c+".") || name == c {
				return 95
			}
		}
		switch name {
		case "package-lock.json", "pnpm-lock.yaml", "yarn.lock", "npm-shrinkwrap.json":
			score = max(score, 20)
		}
		if score == 0 && isSourceExt(path.Ext(name)) {
			score = 5
		}
	}
	return score
}

// maxPackageJSON bounds a package.json read.
const maxPackageJSON = 4 << 20

// packageJSON is what the driver reads of a package.json.
type packageJSON struct {
	Type                 string            `json:"type"`
	Scripts              map[string]string `json:"scripts"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	PackageManager       string            `json:"packageManager"`
	Jest                 json.RawMessage   `json:"jest"`
	Mocha                json.RawMessage   `json:"mocha"`
	Workspaces           json.RawMessage   `json:"workspaces"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

// readPackageJSON reads the checkout's package.json as an untrusted file.
func readPackageJSON(dir string) (packageJSON, error) {
	var p packageJSON
	data, err := untrusted.ReadFile(dir, "package.json", maxPackageJSON)
	if err != nil {
		return p, err
	}
	err = json.Unmarshal(data, &p)
	return p, err
}

// has reports a dependency of any kind on name.
func (p packageJSON) has(name string) bool {
	return p.DevDependencies[name] != "" || p.Dependencies[name] != "" || p.OptionalDependencies[name] != ""
}

// runner is the test runner package.json points at: the one its test
// script names, else the one it depends on (vitest before jest before
// mocha), else "node" for a test script running node --test; "" when
// none.
func (p packageJSON) runner() string {
	script := p.Scripts["test"]
	for _, fields := range [][]string{strings.Fields(script)} {
		for i, f := range fields {
			switch path.Base(f) {
			case "vitest", "jest", "mocha":
				return path.Base(f)
			case "node":
				if i+1 < len(fields) && fields[i+1] == "--test" {
					return "node"
				}
			}
		}
	}
	for _, r := range knownRunners {
		if p.has(r) {
			return r
		}
	}
	if strings.Contains(script, "--test") && strings.Contains(script, "node") {
		return "node"
	}
	return ""
}

// sourceExts are JavaScript's and TypeScript's file extensions, in the
// order an import without one is resolved (imports.go).
var sourceExts = []string{".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"}

// isSourceExt reports one of sourceExts (a .d.ts file declares types
// only, but it is TypeScript too).
func isSourceExt(ext string) bool { return slices.Contains(sourceExts, ext) }

// skipDir reports a directory whose files are not the repository's own
// code: installed packages, builds, coverage reports, hidden ones.
func skipDir(name string) bool {
	switch name {
	case "node_modules", "dist", "coverage", "bower_components", "jspm_packages":
		return true
	}
	return strings.HasPrefix(name, ".") && name != "." && name != ".."
}

// inSkippedDir reports a path (slash-separated, relative) under a skipped
// directory.
func inSkippedDir(rel string) bool {
	for _, d := range strings.Split(path.Dir(rel), "/") {
		if d != "." && skipDir(d) {
			return true
		}
	}
	return false
}

// testDirs hold tests.
var testDirs = map[string]bool{"__tests__": true, "test": true, "tests": true, "__test__": true}

// testConfigs are the runners' configuration and set-up files (their
// extension aside): what they say decides what the tests see.
var testConfigs = []string{"vitest.config", "vitest.workspace", "vitest.setup", "jest.config", "jest.setup", "setupTests", ".mocharc"}

// runnerFileRE matches the base names (in lower case) of the runners'
// configuration and setup files: jest.config.*, vitest.config.*,
// vitest.workspace.*, .mocharc.*, jest.setup.*, vitest.setup.*,
// setupTests.*, and karma's, jasmine's and ava's.
var runnerFileRE = regexp.MustCompile(`^(jest|vitest|ava|jasmine|karma|mocha)\.(config|workspace|projects)(\.[\w-]+)*\.([cm]?[jt]s|json[c5]?)$|^\.mocharc(\.(js|cjs|mjs|json|jsonc|yaml|yml))?$|^(jest|vitest|test|tests|mocha)[.-]setup([.-][\w-]+)*\.[cm]?[jt]sx?$|^setup-?tests(\.[\w-]+)*\.[cm]?[jt]sx?$|^jasmine\.json$`)

// isRunnerFile reports a test runner's configuration or setup file: what
// it says decides which tests run and what they see.
func isRunnerFile(rel string) bool {
	base := path.Base(filepath.ToSlash(rel))
	if runnerFileRE.MatchString(strings.ToLower(base)) {
		return true
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	for _, c := range testConfigs {
		if stem == c || strings.HasPrefix(base, c+".") {
			return true
		}
	}
	return false
}

// IsTestFile: *.test.* and *.spec.* source files, anything under a
// __tests__, test or tests directory, and the runners' configuration and
// set-up files (vitest.config.ts, jest.config.js, .mocharc.yml,
// jest.setup.js, setupTests.ts).
func (Driver) IsTestFile(rel string) bool {
	rel = filepath.ToSlash(rel)
	base := path.Base(rel)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if isSourceExt(ext) && (strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")) {
		return true
	}
	if isRunnerFile(rel) {
		return true
	}
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if testDirs[seg] {
			return true
		}
	}
	return false
}

// dataDirs hold what tests read or compare with.
var dataDirs = map[string]bool{
	"testdata": true, "test-data": true, "test_data": true, "fixtures": true, "__fixtures__": true,
	"__snapshots__": true, "__image_snapshots__": true, "snapshots": true, "__mocks__": true, "golden": true, "__data__": true,
}

// IsTestData: snapshots (*.snap, anything under __snapshots__ or
// __image_snapshots__), fixtures,
// mocks (__mocks__) and golden files, and the files under a test
// directory that are not source (test/data/expected.json).
func (Driver) IsTestData(rel string) bool {
	rel = filepath.ToSlash(rel)
	if strings.HasSuffix(rel, ".snap") {
		return true
	}
	inTests := false
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if dataDirs[seg] {
			return true
		}
		if testDirs[seg] {
			inTests = true
		}
	}
	return inTests && !isSourceExt(path.Ext(rel))
}

// IsSource: .js .jsx .mjs .cjs .ts .tsx .mts .cts files.
func (Driver) IsSource(rel string) bool { return isSourceExt(path.Ext(rel)) }

// PackageOf is the package holding the file at rel: a test file is its
// own package; another source file's is its directory ("src", or "."
// for the root). ok is false for other files and for files in
// node_modules, builds and hidden directories.
func (d Driver) PackageOf(dir, rel string) (string, bool) {
	rel = path.Clean(filepath.ToSlash(rel))
	if !isSourceExt(path.Ext(rel)) || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) || inSkippedDir(rel) {
		return "", false
	}
	if d.IsTestFile(rel) && !isRunnerFile(rel) {
		return rel, true
	}
	return path.Dir(rel), true
}
