package bench

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/harness/tools/words"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/testrun"
)

// Language is what mine and bench need of a repository's language driver
// (a lang.Driver): its tests set up, named, listed and run, and its files
// told apart.
type Language interface {
	Name() string
	Setup(ctx context.Context, dir string) error
	Resolve(dir, id string) (testrun.Target, error)
	Run(ctx context.Context, dir string, ids []string, count int) (testrun.Outcome, error)
	RunPackages(ctx context.Context, dir string, pkgs []string) (testrun.Outcome, error)
	List(ctx context.Context, dir string, pkgs []string) ([]testrun.Listed, error)
	PackageOf(dir, rel string) (string, bool)
	IsTestFile(rel string) bool
	IsTestData(rel string) bool
	IsSource(rel string) bool
}

// Languages chooses a repository's driver from its checkout
// (*lang.Drivers).
type Languages interface {
	For(repo, dir string) (lang.Driver, error)
}

// language is the driver of repo checked out at dir, chosen once for a
// mine or a task through ls. There is no default: no ls is an error
// wrapping lang.ErrNoDriver, as a repository no driver knows is.
func language(ls Languages, repo, dir string) (Language, error) {
	if ls == nil {
		return nil, fmt.Errorf("choose the language driver of %s: %w (none is configured)", repo, lang.ErrNoDriver)
	}
	d, err := ls.For(repo, dir)
	if err != nil {
		return nil, fmt.Errorf("choose the language driver: %w", err)
	}
	return d, nil
}

// A language's rules for mining its fixes and scoring its tasks are
// capabilities its driver may implement, asked for with a type assertion;
// without one, mine and bench do with the Driver's methods alone.
type (
	// RootFile is a driver whose commits are mined only with a file at
	// the repository's root (Go's go.mod); why says what a commit
	// without it is.
	RootFile interface {
		RequiredRootFile() (name, why string)
	}
	// FileTests is a driver that reads the tests changed test files
	// define from the files themselves (Go: collecting would build whole
	// packages); an error is a checkout it cannot read them in.
	FileTests interface {
		TestsInFiles(root string, files []string) ([]string, error)
	}
	// PackageDirs is a driver whose RunPackages takes packages by another
	// name than its tests' (Go: a directory "./x" for an import path): a
	// target's, and the packages' (an error for a checkout it cannot
	// name them in).
	PackageDirs interface {
		TargetPackage(t testrun.Target) string
		RunPackageNames(root string, pkgs []string) ([]string, error)
	}
	// FetchingSetup is a driver whose setup only fetches dependencies
	// (Go's module versions): its failure is the environment's, and so is
	// a build whose failure names a dependency not fetched.
	FetchingSetup interface {
		UnfetchedDependency(line string) bool
	}
	// NetworkFailures is a driver that knows its tests' own words for a
	// failure to reach the network, beyond every language's (networkRE).
	NetworkFailures interface {
		NetworkFailure(text string) bool
	}
	// worded is a driver that names its language in prose (the agent's
	// tools' words).
	worded interface {
		ToolWords() words.Words
	}
)

// isTestSource reports a file of tests in the language's code (a
// _test.go, a test_*.py or conftest.py), not the data tests read.
func isTestSource(l Language, p string) bool {
	return l.IsTestFile(p) && l.IsSource(p) && !l.IsTestData(p)
}

// isCode reports a file of the language's code that is not a test's.
func isCode(l Language, p string) bool { return l.IsSource(p) && !l.IsTestFile(p) }

// languageTitle is how the driver's language is written in prose: its
// words' name for it, else the driver's name.
func languageTitle(l Language) string {
	if w, ok := l.(worded); ok && w.ToolWords().Lang != "" {
		return w.ToolWords().Lang
	}
	return l.Name()
}

// skipNoCode is the skip of a commit that changes none of the language's
// files: no-<driver>-change (SkipNoCode), no-go-change for Go,
// no-python-change for Python, no-node-change for JavaScript and
// TypeScript.
func skipNoCode(l Language) *skipped {
	return skipf("no-"+l.Name()+"-change", "no %s file changed", languageTitle(l))
}

// needsNetwork reports a run's failures that come from the network.
func needsNetwork(l Language, text string) bool {
	if networkRE.MatchString(text) {
		return true
	}
	n, ok := l.(NetworkFailures)
	return ok && n.NetworkFailure(text)
}

// under reports that id is parent or one of its tests: a Go subtest
// (parent/sub), a pytest parameter (parent[p]) or a member of a class or
// file (parent::test).
func under(id, parent string) bool {
	return id == parent || strings.HasPrefix(id, parent+"/") || strings.HasPrefix(id, parent+"[") || strings.HasPrefix(id, parent+"::")
}

// listedTests lists the tests that the files (test sources changed by a
// fix, checked out at root) define, as the driver collects them: the
// packages that hold the files are listed, and the tests of the files
// themselves kept, named by their canonical ids. A package that does not
// collect is not an error as long as the files' tests are listed; when
// none is, its error is the reason.
func listedTests(ctx context.Context, l Language, root string, files []string) ([]string, string, error) {
	var pkgs []string
	want := map[string]bool{}
	for _, f := range files {
		pkg, ok := l.PackageOf(root, f)
		if !ok {
			continue
		}
		want[f] = true
		if !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil, "", nil
	}
	listed, listErr := l.List(ctx, root, pkgs)
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	var ids []string
	for _, ls := range listed {
		if !want[ls.ImportPath] {
			continue
		}
		for _, name := range ls.Tests {
			if id := ls.ImportPath + "::" + name; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	why := ""
	if listErr != nil && len(ids) == 0 {
		// What the driver said of the first changed file, if it names one.
		msg := listErr.Error()
		for _, f := range files {
			if i := strings.Index(msg, "\n"+f+": "); i >= 0 {
				msg = msg[i+1:]
				break
			}
		}
		why = oneLine(msg, 300)
	}
	return ids, why, nil
}
