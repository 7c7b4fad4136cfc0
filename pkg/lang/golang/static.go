package golang

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// StaticCheck is the static gate's check of Go: the module builds
// (go build ./...), the changed packages vet, the changed files are
// formatted; what says so, for the evidence.
func (d Driver) StaticCheck(ctx context.Context, dir string, patch []unidiff.File) ([]findings.Finding, string, error) {
	checks := staticChecks{Build: []string{"./..."}, Vet: changedPackages(dir, patch), Gofmt: changedFiles(dir, patch), Timeout: d.CheckTimeout}
	fs, err := runStatic(ctx, dir, checks)
	what := fmt.Sprintf("go build ./..., go vet on %s, gofmt on %s", listOr(checks.Vet, "no package"), listOr(checks.Gofmt, "no file"))
	return fs, what, err
}

// changedPackages are the packages the patch changes that are in the
// checkout at dir (a directory holding Go files), as "./x" patterns.
func changedPackages(dir string, patch []unidiff.File) []string {
	seen := map[string]bool{}
	var pkgs []string
	for _, f := range patch {
		for _, p := range f.Paths() {
			if !strings.HasSuffix(p, ".go") || (Driver{}).IsTestData(p) {
				continue
			}
			d := path.Dir(p)
			if seen[d] {
				continue
			}
			seen[d] = true
			if hasGoFiles(dir, d) {
				pkgs = append(pkgs, pattern(d))
			}
		}
	}
	sort.Strings(pkgs)
	return pkgs
}

// changedFiles are the .go files the patch leaves that are in the
// checkout at dir.
func changedFiles(dir string, patch []unidiff.File) []string {
	var out []string
	for _, f := range patch {
		p := f.NewPath
		if p == "" || !strings.HasSuffix(p, ".go") || (Driver{}).IsTestData(p) {
			continue
		}
		if fi, err := untrusted.Lstat(dir, p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// pattern is the package pattern of a directory: "./x", or ".".
func pattern(d string) string {
	if d == "." || d == "" {
		return "."
	}
	return "./" + d
}

// hasGoFiles reports a directory rel under dir that holds a Go file.
func hasGoFiles(dir, rel string) bool {
	ents, err := untrusted.ReadDir(dir, rel)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

// listOr is the first ten of xs, or none when there are none.
func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	if len(xs) > 10 {
		return strings.Join(xs[:10], " ") + fmt.Sprintf(" … and %d more", len(xs)-10)
	}
	return strings.Join(xs, " ")
}
