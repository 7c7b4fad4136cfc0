// Package golang is the Go driver behind the language seam (pkg/lang): go
// test for tests (pkg/testrun), go build, go vet and gofmt for the static
// checks (pkg/findings), go/ast for declarations (pkg/codeindex).
package golang

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Driver runs Go repositories. The zero Driver uses testrun's defaults.
type Driver struct {
	// Tests runs go test (its timeouts and output caps).
	Tests Runner
	// CheckTimeout bounds each static check's command (0: the sandbox's
	// default).
	CheckTimeout time.Duration
	// SetupTimeout bounds go mod download (0: ten minutes).
	SetupTimeout time.Duration
}

// Name is "go".
func (Driver) Name() string { return "go" }

// Detect: a go.mod at the root is certain; Go files without one (a GOPATH
// layout) are a weak sign.
func (Driver) Detect(dir string) int {
	if fi, err := untrusted.Lstat(dir, "go.mod"); err == nil && fi.Mode().IsRegular() {
		return 100
	}
	if ents, err := untrusted.ReadDir(dir, "."); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".go") && e.Type().IsRegular() {
				return 10
			}
		}
	}
	return 0
}

// Setup fills the repository's Go caches, the only step that writes them:
// the module versions the checkout's go.mod names (go mod download, the
// one Go step that reaches the module proxy, through the sandbox's egress),
// then those modules' packages compiled into its build cache, so that the
// checkout's test runs, which write only a scratch cache of their own and
// compile the checkout's own packages afresh, find its dependencies
// compiled (they change far more rarely than the checkout). Module
// downloads and compiling run no code of the repository's; a dependency
// that does not compile is not a setup failure: the tests say so.
func (d Driver) Setup(ctx context.Context, dir string) error {
	timeout := d.SetupTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	data, err := untrusted.ReadFile(dir, "go.mod", testrun.MaxSourceBytes)
	if err != nil || !requires(string(data)) {
		return nil // no module (go test will say), or nothing to fetch
	}
	fill := caches(ctx)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: []string{"go", "mod", "download"}, Setup: true, Fill: fill, Registries: registries(ctx), Timeout: timeout, MaxOutput: 64 << 10})
	if err != nil {
		return fmt.Errorf("go mod download in %s: %w", dir, err)
	}
	if !res.OK() {
		if res.TimedOut {
			return fmt.Errorf("go mod download: timed out after %s", timeout)
		}
		return fmt.Errorf("go mod download: exit %d\n%s", res.ExitCode, strings.TrimSpace(res.Output))
	}
	// The dependencies' packages, listed by the go command (tests' too),
	// compiled into the repository's build cache.
	res, err = sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: []string{"go", "list", "-e", "-deps", "-test", "-f", dependencyFormat, "./..."}, Timeout: timeout, MaxOutput: 4 << 20})
	if err != nil {
		return fmt.Errorf("list the dependencies in %s: %w", dir, err)
	}
	deps := strings.Fields(res.Output)
	if !res.OK() || len(deps) == 0 {
		return nil
	}
	args := append([]string{"go", "build"}, deps...)
	if _, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: args, Setup: true, Fill: fill[1:], Timeout: timeout, MaxOutput: 16 << 10}); err != nil {
		return fmt.Errorf("compile the dependencies in %s: %w", dir, err)
	}
	return nil
}

// dependencyFormat prints the import path of a package of a required
// module (not the standard library's, not the checkout's own).
const dependencyFormat = `{{if and (not .Standard) .Module (not .Module.Main) (not .Error)}}{{.ImportPath}}{{end}}`

// requires reports a go.mod that names a module it requires.
func requires(gomod string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "require" {
			return true
		}
	}
	return false
}

// Resolve names a test canonically: "import/path.TestX/sub" (see the
// package function Resolve).
func (Driver) Resolve(dir, id string) (testrun.Target, error) { return Resolve(dir, id) }

// Run runs go test on the tests.
func (d Driver) Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error) {
	return d.Tests.Run(ctx, dir, ids, count)
}

// RunPackages runs go test on the packages ("./x").
func (d Driver) RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	return d.Tests.RunPackages(ctx, dir, pkgs)
}

// Build compiles the packages and their tests, running none.
func (d Driver) Build(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error) {
	return d.Tests.Build(ctx, dir, pkgs)
}

// List lists the packages' top-level tests.
func (d Driver) List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error) {
	return d.Tests.List(ctx, dir, pkgs)
}

// Localize ranks lines by per-test coverage (go test -cover).
func (d Driver) Localize(ctx context.Context, dir string, ids []string, n int) (testrun.Spectra, error) {
	return d.Tests.Localize(ctx, dir, ids, n)
}

// PackageOf is the package ("./x/y" or ".") of the Go file at rel in the
// module at dir; ok is false outside the module's packages (testdata,
// vendor, hidden and "_" directories, another module).
func (Driver) PackageOf(dir, rel string) (string, bool) {
	rel = path.Clean(filepath.ToSlash(rel))
	if !strings.HasSuffix(rel, ".go") {
		return "", false
	}
	d := path.Dir(rel)
	for _, part := range strings.Split(d, "/") {
		if part == "testdata" || part == "vendor" || part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, ".")) {
			return "", false
		}
	}
	// A go.mod between the root and the file makes it another module's.
	for p := d; p != "." && p != "/"; p = path.Dir(p) {
		if _, err := untrusted.Lstat(dir, path.Join(p, "go.mod")); err == nil {
			return "", false
		}
	}
	if d == "." {
		return ".", true
	}
	return "./" + d, true
}

// IsTestFile: _test.go files, and anything under testdata.
func (Driver) IsTestFile(rel string) bool {
	if strings.HasSuffix(rel, "_test.go") {
		return true
	}
	return hasSegment(rel, func(s string) bool { return s == "testdata" })
}

// IsTestData: what lies under testdata (and vendor, hidden and "_"
// directories, which the go command ignores too).
func (Driver) IsTestData(rel string) bool {
	return hasSegment(rel, func(s string) bool {
		return s == "testdata" || s == "vendor" || strings.HasPrefix(s, "_") || strings.HasPrefix(s, ".") && s != "." && s != ".."
	})
}

// IsSource: .go files.
func (Driver) IsSource(rel string) bool { return strings.HasSuffix(rel, ".go") }

func hasSegment(rel string, match func(string) bool) bool {
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if match(seg) {
			return true
		}
	}
	return false
}
