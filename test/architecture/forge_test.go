package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// clientLibraries are the forge drivers' client libraries, each with the
// driver (and its parts below it) that alone may import it.
var clientLibraries = []struct{ module, driver string }{
	{"github.com/google/go-github/", "pkg/forge/github"},
	{"gitlab.com/gitlab-org/api/client-go/", "pkg/forge/gitlab"},
}

// TestForgeSeam keeps the forge seam cut: each forge's client library (go-github,
// GitLab's client-go) is imported by its driver alone (and the wiring, which
// constructs it), tests included; a driver is imported by the wiring alone,
// every other package speaking to forges through pkg/forge's vocabulary and
// the interfaces it declares itself. (That the vocabulary knows no driver
// needs no rule: every driver imports it, and Go allows no cycle.)
func TestForgeSeam(t *testing.T) {
	for _, p := range packages(t) {
		rel := p.rel()
		wiring := rel == "pkg/app" || under(rel, "cmd")
		for _, imp := range append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...) {
			for _, l := range clientLibraries {
				if strings.HasPrefix(imp, l.module) && !under(rel, l.driver) && !wiring {
					t.Errorf("%s imports %s: the forge's client library's types stay in its driver (%s)", rel, imp, l.driver)
				}
			}
		}
		for _, imp := range p.own() {
			for _, l := range clientLibraries {
				if under(imp, l.driver) && !under(rel, l.driver) && !wiring {
					t.Errorf("%s imports %s: only the wiring (pkg/app) knows the forge's driver; declare the forge's methods you use, in pkg/forge's words", rel, imp)
				}
			}
		}
	}
}

// TestGitLabNamedByItsDriverAlone: outside the GitLab driver (and its
// parts below it), the wiring (pkg/app, cmd), the configuration
// (pkg/config) and the tests, no identifier names GitLab: the core speaks
// of forges, change requests and checks. (Strings are not read: a
// repository's .gitlab-ci.yml is a file to protect, not the forge; the
// forge's client library is kept by TestForgeSeam.)
func TestGitLabNamedByItsDriverAlone(t *testing.T) {
	for _, p := range packages(t) {
		rel := p.rel()
		if under(rel, "pkg/forge/gitlab") || rel == "pkg/app" || under(rel, "cmd") || under(rel, "pkg/config") ||
			under(rel, "test") || testSupport(rel) || strings.HasSuffix(rel, "test") {
			continue
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && strings.Contains(strings.ToLower(id.Name), "gitlab") {
					t.Errorf("%s/%s: identifier %s names GitLab outside its driver and the wiring; speak of forges (pkg/forge's words)", rel, name, id.Name)
				}
				return true
			})
		}
	}
}
