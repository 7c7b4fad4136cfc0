package bench

import (
	"testing"

	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/node"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/testrun"
)

// The drivers' mining rules, as bench asks for them.
var (
	_ RootFile      = golang.Driver{}
	_ FileTests     = golang.Driver{}
	_ PackageDirs   = golang.Driver{}
	_ FetchingSetup = golang.Driver{}

	_ NetworkFailures = python.Driver{}
	_ NetworkFailures = node.Driver{}
)

// What mine says of each driver's language comes from the driver: its
// name in prose, its skip of a commit that changes none of its files, its
// failures to reach the network, its packages as RunPackages takes them.
func TestLanguageRulesFromTheDrivers(t *testing.T) {
	const pyNet = "socket.gaierror: [Errno -3] Temporary failure in name resolution"
	const nodeNet = "Error: getaddrinfo ENOTFOUND registry.example"
	const anyNet = "dial tcp 10.0.0.1:443: i/o timeout"
	target := testrun.Target{ID: "p.T", ImportPath: "example.com/m/x", Dir: "./x", Test: "T"}
	for _, c := range []struct {
		d                 lang.Driver
		title, skip       string
		pyNet, nodeNet    bool
		pkg               string
		modules, fileTest bool
	}{
		{golang.Driver{}, "Go", "no-go-change", false, false, "./x", true, true},
		{python.Driver{}, "Python", "no-python-change", true, false, "example.com/m/x", false, false},
		{node.Driver{}, "JavaScript or TypeScript", "no-node-change", false, true, "example.com/m/x", false, false},
	} {
		if got := languageTitle(c.d); got != c.title {
			t.Errorf("%s: title %q, want %q", c.d.Name(), got, c.title)
		}
		if got := skipNoCode(c.d); got.kind != c.skip {
			t.Errorf("%s: skip %q, want %q", c.d.Name(), got.kind, c.skip)
		}
		if needsNetwork(c.d, pyNet) != c.pyNet || needsNetwork(c.d, nodeNet) != c.nodeNet || !needsNetwork(c.d, anyNet) {
			t.Errorf("%s: network failures %v %v %v", c.d.Name(), needsNetwork(c.d, pyNet), needsNetwork(c.d, nodeNet), needsNetwork(c.d, anyNet))
		}
		if got := packageDir(c.d, target); got != c.pkg {
			t.Errorf("%s: package %q, want %q", c.d.Name(), got, c.pkg)
		}
		if _, ok := c.d.(FetchingSetup); ok != c.modules {
			t.Errorf("%s: a fetching setup %v, want %v", c.d.Name(), ok, c.modules)
		}
		if _, ok := c.d.(FileTests); ok != c.fileTest {
			t.Errorf("%s: reads tests from files %v, want %v", c.d.Name(), ok, c.fileTest)
		}
	}
}
