package protected

import (
	"strings"
	"testing"
)

func isGoCode(p string) bool { return strings.HasSuffix(p, ".go") }

func TestNamedBy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		glob, path string
		named      bool
	}{
		{"Makefile", "Makefile", true},
		{"**/Makefile", "build/Makefile", true},
		{"**/Makefile", "Makefile", true},
		{"Makefile", "build/Makefile", false}, // the pattern is anchored at the root
		{"**", "Makefile", false},
		{"*", "Makefile", false},
		{"Make*", "Makefile", false},
		{"**/*.mk", "build/rules.mk", true},
		{"build/*", "build/rules.mk", false},
		{"Dockerfile.*", "Dockerfile.ci", true},
		{".github", ".github/workflows/ci.yml", true},
		{".github/**", ".github/workflows/ci.yml", true},
		{".github/workflows/*.yml", ".github/workflows/ci.yml", true},
		{"**/.github/**", ".github/workflows/ci.yml", true},
		{"**/workflows/*", ".github/workflows/ci.yml", false},
		{".*/**", ".github/workflows/ci.yml", false},
		{"docs", "docs/CODEOWNERS", false},
		{"docs/CODEOWNERS", "docs/CODEOWNERS", true},
		{"docs/*", "docs/CODEOWNERS", false},
		{".github/**", ".github/CODEOWNERS", false}, // the ownership file is named by its own name
		{"vendor/**", "vendor/example.com/dep/dep.go", true},
		{"**/dep.go", "vendor/example.com/dep/dep.go", false},
	} {
		pp, ok := Classify(Common, c.path, isGoCode)
		if !ok {
			t.Errorf("%s is not protected", c.path)
			continue
		}
		if got := pp.NamedBy([]string{c.glob}, c.path); got != c.named {
			t.Errorf("policy %q names %s = %v, want %v", c.glob, c.path, got, c.named)
		}
	}
}

// The common kinds do not claim ordinary code and documents, nor code
// named like a build file.
func TestUnprotectedPaths(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		"calc/calc.go", "README.md", ".gitignore", "docs/build.md", "cmd/builder/main.go", "scripts/gen/main.go",
		"internal/github/client.go", "pkg/ci/ci.go", "makefile.go", "owners.go", "gomod.go", "dockerfile.go",
		"pkg/vendors/list.go", "cmd/githooks/main.go",
	} {
		if pp, ok := Classify(Common, p, isGoCode); ok {
			t.Errorf("%s is protected as %s", p, pp.Kind.What)
		}
	}
}

// A kind whose patterns may name code claims it; the others' wildcards
// do not, their literal names do.
func TestCodeNamedByAKind(t *testing.T) {
	t.Parallel()
	lint := Kind{What: CI.What, Why: CI.Why, Names: []string{"lint.config.*"}, Code: true}
	kinds := append([]Kind{lint}, Common...)
	if pp, ok := Classify(kinds, "lint.config.go", isGoCode); !ok || pp.Kind.What != CI.What {
		t.Errorf("lint.config.go: %+v %v, want a CI configuration file", pp, ok)
	}
	if _, ok := Classify(kinds, "Makefile.go", isGoCode); ok {
		t.Error("Makefile.go is protected: a wildcard of a kind that does not name code claimed it")
	}
	if _, ok := Classify(kinds, "Makefile.go", nil); !ok {
		t.Error("Makefile.go in a repository whose code it is not is not protected")
	}
}
