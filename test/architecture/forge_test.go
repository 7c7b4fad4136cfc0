package architecture

import (
	"strings"
	"testing"
)

// goGitHub is the GitHub client library's module.
const goGitHub = "github.com/google/go-github/"

// githubDriver is the GitHub forge driver, with its parts below it.
const githubDriver = "pkg/forge/github"

// TestForgeSeam keeps the forge seam cut: the GitHub client library is
// imported by the GitHub driver alone (and the wiring, which constructs
// it), tests included; the driver is imported by the wiring alone, every
// other package speaking to forges through pkg/forge's vocabulary and the
// interfaces it declares itself. (That the vocabulary knows no driver
// needs no rule: every driver imports it, and Go allows no cycle.)
func TestForgeSeam(t *testing.T) {
	for _, p := range packages(t) {
		rel := p.rel()
		wiring := rel == "pkg/app" || under(rel, "cmd")
		for _, imp := range append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...) {
			if strings.HasPrefix(imp, goGitHub) && !under(rel, githubDriver) && !wiring {
				t.Errorf("%s imports %s: the GitHub client library's types stay in the GitHub driver (%s)", rel, imp, githubDriver)
			}
		}
		for _, imp := range p.own() {
			if under(imp, githubDriver) && !under(rel, githubDriver) && !wiring {
				t.Errorf("%s imports %s: only the wiring (pkg/app) knows the GitHub driver; declare the forge's methods you use, in pkg/forge's words", rel, imp)
			}
		}
	}
}
