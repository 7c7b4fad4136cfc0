package validators

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// static builds the module, vets the changed packages and checks the changed
// files' formatting. Only findings that the base commit does not have fail
// the gate: the patch is not blamed for the repository's old debts. Findings
// are compared by file and message, without line numbers, which the patch
// moves.
func (v *Validators) static(ctx context.Context, c *candidate) (task.Gate, error) {
	if !c.isGo() {
		return v.driverStatic(ctx, c)
	}
	checks := staticChecks(c.in.Dir, c.files)
	head, err := findings.Run(ctx, c.in.Dir, checks)
	if err != nil {
		return task.Gate{}, err
	}
	what := fmt.Sprintf("go build ./..., go vet on %s, gofmt on %s",
		listOr(checks.Vet, "no package"), listOr(checks.Gofmt, "no file"))
	if len(head) == 0 {
		return pass("clean: " + what), nil
	}
	dir, err := c.baseDir(ctx)
	if err != nil {
		return task.Gate{}, err
	}
	base, err := findings.Run(ctx, dir, staticChecks(dir, c.files))
	if err != nil {
		return task.Gate{}, err
	}
	fresh, old := findings.Compare(head, base)
	if len(fresh) == 0 {
		return pass(fmt.Sprintf("no new finding: %s; %d finding(s) already at base %s", what, old, task.Short(c.in.Base))), nil
	}
	detail := fmt.Sprintf("%d new finding(s) (%s):\n- %s", len(fresh), what, strings.Join(capList(findings.Texts(fresh), 30), "\n- "))
	if old > 0 {
		detail += fmt.Sprintf("\n(%d other finding(s) already at base %s are not blamed)", old, task.Short(c.in.Base))
	}
	return fail(detail), nil
}

// staticChecks are the checks of a change in the checkout at dir: the
// module builds, the changed packages vet, the changed files are formatted.
func staticChecks(dir string, files []unidiff.File) findings.Checks {
	return findings.Checks{Build: []string{"./..."}, Vet: goPackages(dir, files), Gofmt: goFiles(dir, files)}
}

// goPackages are the changed packages that exist in dir, as "./x" patterns.
func goPackages(dir string, files []unidiff.File) []string {
	seen := map[string]bool{}
	var pkgs []string
	for _, f := range files {
		for _, p := range f.Paths() {
			if !strings.HasSuffix(p, ".go") || isTestData(p) {
				continue
			}
			d := path.Dir(p)
			if seen[d] {
				continue
			}
			seen[d] = true
			if hasGoFiles(filepath.Join(dir, filepath.FromSlash(d))) {
				pkgs = append(pkgs, pattern(d))
			}
		}
	}
	sort.Strings(pkgs)
	return pkgs
}

// goFiles are the changed .go files that exist in dir.
func goFiles(dir string, files []unidiff.File) []string {
	var out []string
	for _, f := range files {
		p := f.NewPath
		if p == "" || !strings.HasSuffix(p, ".go") || isTestData(p) {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func pattern(d string) string {
	if d == "." || d == "" {
		return "."
	}
	return "./" + d
}

func hasGoFiles(dir string) bool {
	ents, err := os.ReadDir(dir)
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

func isTestData(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "testdata" || seg == "vendor" || strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return true
		}
	}
	return false
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(capList(xs, 10), " ")
}

// capList keeps the first n items and says how many more there were.
func capList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), fmt.Sprintf("… and %d more", len(xs)-n))
}

// driverStatic is the static gate through the language's driver: its
// checks (for Python, compile and pyflakes; for JavaScript and
// TypeScript, tsc and eslint) on the changed files, after the
// patch and at the base; only the findings the base does not have fail it.
func (v *Validators) driverStatic(ctx context.Context, c *candidate) (task.Gate, error) {
	var files []string
	for _, f := range c.files {
		if p := f.NewPath; p != "" && !c.isTestData(p) {
			files = append(files, p)
		}
	}
	sort.Strings(files)
	var sources []string // what the evidence names
	for _, p := range files {
		if c.isSource(p) {
			sources = append(sources, p)
		}
	}
	what := fmt.Sprintf("%s checks on %s", c.driver().Name(), listOr(sources, "no file"))
	switch {
	case c.isPython():
		what = "compile and pyflakes on " + listOr(sources, "no file")
	case c.isNode():
		what = "the node driver's checks (tsc, eslint, where the project has them) on " + listOr(sources, "no file")
	}
	head, err := c.driver().Check(ctx, c.in.Dir, files)
	if err != nil {
		return task.Gate{}, fmt.Errorf("static checks: %w", err)
	}
	if len(head) == 0 {
		return pass("clean: " + what), nil
	}
	dir, err := c.baseDir(ctx)
	if err != nil {
		return task.Gate{}, err
	}
	base, err := c.driver().Check(ctx, dir, files)
	if err != nil {
		return task.Gate{}, fmt.Errorf("static checks at base: %w", err)
	}
	fresh, old := findings.Compare(head, base)
	if len(fresh) == 0 {
		return pass(fmt.Sprintf("no new finding: %s; %d finding(s) already at base %s", what, old, task.Short(c.in.Base))), nil
	}
	detail := fmt.Sprintf("%d new finding(s) (%s):\n- %s", len(fresh), what, strings.Join(capList(findings.Texts(fresh), 30), "\n- "))
	if old > 0 {
		detail += fmt.Sprintf("\n(%d other finding(s) already at base %s are not blamed)", old, task.Short(c.in.Base))
	}
	return fail(detail), nil
}
