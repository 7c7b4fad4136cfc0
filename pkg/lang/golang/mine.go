package golang

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
)

// Go's rules for mining past fixes and scoring their tasks (pkg/bench asks
// for them as capabilities): a commit needs a go.mod, the tests a fix
// changes are read from its _test.go files with go/parser (go test -list
// would build and list whole packages), packages run by directory, and the
// setup only fetches module versions, so that a version it did not fetch
// is the environment's fault, not the commit's.

// RequiredRootFile is the file a commit needs at the repository's root to
// be mined, and why: code without a go.mod predates Go modules.
func (Driver) RequiredRootFile() (name, why string) {
	return "go.mod", "the code predates Go modules"
}

// TestsInFiles lists the top-level tests (func TestX(t *testing.T), and
// examples with an output comment) that the test files among files (of the
// module at root) define, as import/path.TestX, sorted. A file deleted or
// that does not parse is passed over (the build will say); no go.mod at
// root is an error.
func (Driver) TestsInFiles(root string, files []string) ([]string, error) {
	mod, err := Module(root)
	if err != nil {
		return nil, fmt.Errorf("no go.mod at the module root: %w", err)
	}
	var ids []string
	fset := token.NewFileSet()
	for _, p := range files {
		if !strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(p)), nil, parser.SkipObjectResolution|parser.ParseComments)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted by the fix
		}
		if err != nil {
			continue // the build will say
		}
		imp := mod
		if d := path.Dir(p); d != "." {
			imp = mod + "/" + d
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !(isTopTestName(fn.Name.Name) && fn.Type.Params.NumFields() == 1 || isCheckedExample(f, fn)) {
				continue
			}
			if id := imp + "." + fn.Name.Name; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// isCheckedExample reports an example that go test runs: ExampleX() with
// an output comment, whose printed output is checked as a test's
// assertions are. One without it is only compiled.
func isCheckedExample(f *ast.File, fn *ast.FuncDecl) bool {
	if !strings.HasPrefix(fn.Name.Name, "Example") || fn.Type.Params.NumFields() != 0 || fn.Body == nil {
		return false
	}
	if rest := fn.Name.Name[len("Example"):]; rest != "" && rest[0] >= 'a' && rest[0] <= 'z' {
		return false
	}
	for _, g := range f.Comments {
		if g.Pos() < fn.Body.Lbrace || g.End() > fn.Body.Rbrace {
			continue
		}
		text := strings.TrimSpace(g.Text())
		if strings.HasPrefix(text, "Output:") || strings.HasPrefix(text, "Unordered output:") {
			return true
		}
	}
	return false
}

// isTopTestName reports a name go test runs as a test: Test, or Test and a
// word not starting in lower case; TestMain is not one.
func isTopTestName(n string) bool {
	if !strings.HasPrefix(n, "Test") || n == "TestMain" {
		return false
	}
	rest := n[len("Test"):]
	return rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z')
}

// TargetPackage is what RunPackages takes for a target's package: its
// directory ("./x").
func (Driver) TargetPackage(t testrun.Target) string { return t.Dir }

// RunPackageNames are the packages (import paths of the module at root) as
// RunPackages takes them: their directories ("./x", "." for the module's
// own); a package of another module is kept as it is. No go.mod at root is
// an error.
func (Driver) RunPackageNames(root string, pkgs []string) ([]string, error) {
	mod, err := Module(root)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(pkgs))
	for _, imp := range pkgs {
		switch rest, ok := strings.CutPrefix(imp, mod+"/"); {
		case imp == mod:
			out = append(out, ".")
		case ok:
			out = append(out, "./"+rest)
		default:
			out = append(out, imp)
		}
	}
	return out, nil
}

// moduleMissingRE recognises go's words for a module version it could not
// find offline: the setup step did not fetch it.
var moduleMissingRE = regexp.MustCompile(`module lookup disabled by GOPROXY=off|GOFLAGS=-mod=mod|cannot find module providing package|reading \S+/@v/\S+: (no such file|404|410)|verifying \S+: .*: (dial|lookup)`)

// UnfetchedDependency reports a line of a build's failure that names a
// module version the setup did not fetch. The Go setup only fetches: its
// failure, and such a build's, are the environment's.
func (Driver) UnfetchedDependency(line string) bool { return moduleMissingRE.MatchString(line) }
