// Package python is the Python driver behind the language seam (pkg/lang):
// pytest for tests, coverage.py for per-test coverage, compile() and
// pyflakes for the static checks, tree-sitter's Python grammar for
// declarations, and a virtual environment per set of declared dependencies.
//
// Tests are named by pytest's node ids, relative to the checkout's root:
// "tests/test_x.py::TestC::test_y[param]". A test file, or a directory of
// them, is what the seam calls a package.
//
// Every command runs through pkg/sandbox. What a command reports (pytest's
// JUnit XML, the collected tests, coverage data) is written into an outbox,
// a directory of redfix's outside the checkout, and read back from it as
// untrusted files: sized, never through a link.
package python

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/untrusted"
)

// Driver runs Python repositories with pytest. The zero Driver uses
// Debian's /usr/bin/python3 when it exists, pip's default index, and the
// sandbox's default timeouts.
type Driver struct {
	// Python is the interpreter the repository's tests and tools run with:
	// a path, or a name looked up on PATH. "" is /usr/bin/python3 when it
	// exists (Debian's, with python3-pytest and python3-coverage), else
	// python3 on PATH. The python3 first on PATH may be another
	// interpreter, without pytest: name one deliberately.
	Python string
	// IndexURL is the package index dependencies are installed from (pip's
	// --index-url); "" leaves it to pip.
	IndexURL string
	// AllowSdists lets pip build source distributions. Off, it installs
	// wheels only (--only-binary :all:): building one runs the package's
	// build backend, code of the index's (or the repository's) choosing,
	// at setup, with the network. A dependency published only as a source
	// distribution then fails the setup, with pip's reason.
	AllowSdists bool
	// Pyflakes is the pyflakes command Check lints with. "" is
	// /usr/bin/pyflakes3 when it exists, else pyflakes3 or pyflakes on
	// PATH; with none, Check only compiles.
	Pyflakes string
	// Timeout bounds each pytest or coverage invocation, SetupTimeout each
	// setup command (a pip install), CheckTimeout each static check; 0 is
	// the sandbox's default.
	Timeout, SetupTimeout, CheckTimeout time.Duration
	// MaxOutput caps the output kept of each command (0: the sandbox's
	// default). Test results are read from the JUnit report, whole.
	MaxOutput int
	// TestEnv ("NAME=value") and TestArgs are the repository's test
	// settings (WithTests): every pytest sees the variables and takes the
	// options. Groups are the dependency groups setup installs (none: the
	// tests' own where the project declares them).
	TestEnv, TestArgs, Groups []string
	// Log takes setup's warnings (a requirement outside the tests' groups
	// that did not install); nil drops them.
	Log *zap.Logger
}

func (d Driver) log() *zap.Logger {
	if d.Log == nil {
		return zap.NewNop()
	}
	return d.Log
}

// Name is "python".
func (Driver) Name() string { return "python" }

// strongMarkers are files at a checkout's root that say it is a Python
// project whose tests pytest runs.
var strongMarkers = []string{"pyproject.toml", "setup.cfg", "setup.py", "pytest.ini", "tox.ini", "conftest.py"}

// Detect: a Python project's files at the root (pyproject.toml, setup.cfg,
// setup.py, pytest.ini, tox.ini, conftest.py) are a strong sign, 90, below
// a go.mod's 100; Python files at the root alone a weak one.
func (Driver) Detect(dir string) int {
	for _, name := range strongMarkers {
		if fi, err := untrusted.Lstat(dir, name); err == nil && fi.Mode().IsRegular() {
			return 90
		}
	}
	if ents, err := untrusted.ReadDir(dir, "."); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".py") && e.Type().IsRegular() {
				return 10
			}
		}
	}
	return 0
}

// skipDir reports a directory whose files are not the repository's own
// code: virtual environments, caches, other tools' trees, hidden ones.
func skipDir(name string) bool {
	switch name {
	case "venv", "__pycache__", "node_modules", "site-packages":
		return true
	}
	return strings.HasPrefix(name, ".") && name != "." && name != ".."
}

// inSkippedDir reports a path (slash-separated, relative) under a skipped
// directory.
func inSkippedDir(rel string) bool {
	dirs := strings.Split(path.Dir(rel), "/")
	for _, d := range dirs {
		if d != "." && skipDir(d) {
			return true
		}
	}
	return false
}

// isTestModule reports a file pytest collects by its default name rule:
// test_*.py and *_test.py.
func isTestModule(rel string) bool {
	base := path.Base(rel)
	return strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py"))
}

// IsTestFile: the test modules (test_*.py, *_test.py), conftest.py, and
// anything under a tests or test directory.
func (Driver) IsTestFile(rel string) bool {
	rel = filepath.ToSlash(rel)
	if isTestModule(rel) || path.Base(rel) == "conftest.py" {
		return true
	}
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if seg == "tests" || seg == "test" {
			return true
		}
	}
	return false
}

// dataDirs hold what tests read or compare with.
var dataDirs = map[string]bool{
	"testdata": true, "test_data": true, "fixtures": true, "__snapshots__": true, "snapshots": true,
	"cassettes": true, "golden": true,
}

// IsTestData: fixtures and golden files: anything under testdata,
// fixtures, __snapshots__, snapshots, cassettes or golden directories,
// syrupy's .ambr snapshots, and the files under a tests or test directory
// that are not Python (tests/data/expected.json).
func (Driver) IsTestData(rel string) bool {
	rel = filepath.ToSlash(rel)
	if strings.HasSuffix(rel, ".ambr") {
		return true
	}
	inTests := false
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if dataDirs[seg] {
			return true
		}
		if seg == "tests" || seg == "test" {
			inTests = true
		}
	}
	return inTests && !strings.HasSuffix(rel, ".py")
}

// IsSource: .py files.
func (Driver) IsSource(rel string) bool { return strings.HasSuffix(rel, ".py") }

// PackageOf is the directory holding the Python file at rel, as pytest
// takes it ("pkg/sub", or "." for the root); ok is false for another kind
// of file and for files in virtual environments, caches and hidden
// directories.
func (Driver) PackageOf(dir, rel string) (string, bool) {
	rel = path.Clean(filepath.ToSlash(rel))
	if !strings.HasSuffix(rel, ".py") || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) || inSkippedDir(rel) {
		return "", false
	}
	return path.Dir(rel), true
}

// interpreter is the Python the driver runs: the configured one, else
// Debian's, else python3 on PATH.
func (d Driver) interpreter() (string, error) {
	name := d.Python
	if name == "" {
		if fi, err := os.Stat("/usr/bin/python3"); err == nil && !fi.IsDir() {
			return "/usr/bin/python3", nil
		}
		name = "python3"
	}
	if strings.ContainsRune(name, '/') {
		if _, err := os.Stat(name); err != nil {
			return "", errNoPython(name, err)
		}
		return name, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errNoPython(name, err)
	}
	return p, nil
}

func errNoPython(name string, err error) error {
	return fmt.Errorf("no Python interpreter %q (set the driver's interpreter): %w", name, err)
}

// pyflakes is the pyflakes command, "" when there is none.
func (d Driver) pyflakes() string {
	if d.Pyflakes != "" {
		if p, err := exec.LookPath(d.Pyflakes); err == nil {
			return p
		}
		return ""
	}
	if fi, err := os.Stat("/usr/bin/pyflakes3"); err == nil && !fi.IsDir() {
		return "/usr/bin/pyflakes3"
	}
	for _, name := range []string{"pyflakes3", "pyflakes"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}
