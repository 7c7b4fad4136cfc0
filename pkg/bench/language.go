package bench

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

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

// isGo says the driver is Go's: its tests are found in the changed files
// with go/parser (go test -list would build and list whole packages), a
// commit needs a go.mod, and its packages run by directory.
func isGo(l Language) bool { return l.Name() == "go" }

// isTestSource reports a file of tests in the language's code (a
// _test.go, a test_*.py or conftest.py), not the data tests read.
func isTestSource(l Language, p string) bool {
	return l.IsTestFile(p) && l.IsSource(p) && !l.IsTestData(p)
}

// isCode reports a file of the language's code that is not a test's.
func isCode(l Language, p string) bool { return l.IsSource(p) && !l.IsTestFile(p) }

// languageTitle is how the driver's language is written in prose.
func languageTitle(l Language) string {
	switch n := l.Name(); n {
	case "go":
		return "Go"
	case "python":
		return "Python"
	case "node":
		return "JavaScript or TypeScript"
	default:
		return n
	}
}

// skipNoCode is the skip of a commit that changes none of the language's
// files: no-go-change for Go (SkipNoGo), no-python-change for Python,
// no-node-change for JavaScript and TypeScript.
func skipNoCode(l Language) *skipped {
	return skipf("no-"+l.Name()+"-change", "no %s file changed", languageTitle(l))
}

// pyNetworkRE recognises a Python test's failure caused by reaching for the
// network (what networkRE is for Go's).
var pyNetworkRE = regexp.MustCompile(`socket\.gaierror|Temporary failure in name resolution|Name or service not known|[Nn]etwork is unreachable|urlopen error|ConnectionRefusedError|Failed to establish a new connection`)

// nodeNetworkRE recognises a JavaScript test's failure caused by reaching
// for the network (node's resolver and socket error codes).
var nodeNetworkRE = regexp.MustCompile(`getaddrinfo (ENOTFOUND|EAI_AGAIN)|connect (ECONNREFUSED|ENETUNREACH|EHOSTUNREACH)|fetch failed`)

// needsNetwork reports a run's failures that come from the network.
func needsNetwork(l Language, text string) bool {
	switch l.Name() {
	case "go":
		return networkRE.MatchString(text)
	case "node":
		return networkRE.MatchString(text) || nodeNetworkRE.MatchString(text)
	}
	return networkRE.MatchString(text) || pyNetworkRE.MatchString(text)
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
