package validators

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// static builds the module, vets the changed packages and checks the changed
// files' formatting. Only findings that the base commit does not have fail
// the gate: the patch is not blamed for the repository's old debts. Findings
// are compared by file and message, without line numbers, which the patch
// moves.
func (v *Validators) static(ctx context.Context, c *candidate) (task.Gate, error) {
	head, err := staticFindings(ctx, c.in.Dir, c.files)
	if err != nil {
		return task.Gate{}, err
	}
	what := fmt.Sprintf("go build ./..., go vet on %s, gofmt -l on %s",
		listOr(goPackages(c.in.Dir, c.files), "no package"), listOr(goFiles(c.in.Dir, c.files), "no file"))
	if len(head) == 0 {
		return pass("clean: " + what), nil
	}
	dir, err := c.baseDir(ctx)
	if err != nil {
		return task.Gate{}, err
	}
	base, err := staticFindings(ctx, dir, c.files)
	if err != nil {
		return task.Gate{}, err
	}
	known := map[string]int{}
	for _, f := range base {
		known[f.key]++
	}
	var fresh []string
	old := 0
	for _, f := range head {
		if known[f.key] > 0 {
			known[f.key]--
			old++
			continue
		}
		fresh = append(fresh, f.text)
	}
	if len(fresh) == 0 {
		return pass(fmt.Sprintf("no new finding: %s; %d finding(s) already at base %s", what, old, task.Short(c.in.Base))), nil
	}
	detail := fmt.Sprintf("%d new finding(s) (%s):\n- %s", len(fresh), what, strings.Join(capList(fresh, 30), "\n- "))
	if old > 0 {
		detail += fmt.Sprintf("\n(%d other finding(s) already at base %s are not blamed)", old, task.Short(c.in.Base))
	}
	return fail(detail), nil
}

// finding is one line of a tool's complaint: text for people, key to compare
// checkouts (the tool, the file and the message, no line numbers).
type finding struct{ key, text string }

func staticFindings(ctx context.Context, dir string, files []unidiff.File) ([]finding, error) {
	var all []finding
	run := func(tool string, args ...string) error {
		res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: args})
		if err != nil {
			return fmt.Errorf("%s in %s: %w", strings.Join(args, " "), dir, err)
		}
		if res.TimedOut {
			all = append(all, finding{key: tool + ": timed out", text: tool + ": timed out"})
			return nil
		}
		if tool == "gofmt" {
			for _, l := range strings.Split(res.Output, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					all = append(all, finding{key: "gofmt: " + l, text: l + ": not gofmt-formatted"})
				}
			}
			if !res.OK() && len(all) == 0 {
				all = append(all, finding{key: "gofmt: " + firstLines(res.Output, 1), text: "gofmt: " + firstLines(res.Output, 3)})
			}
			return nil
		}
		if !res.OK() {
			all = append(all, toolFindings(tool, dir, res.Output)...)
		}
		return nil
	}
	// -o /dev/null: a module whose only package is a main package would
	// otherwise get its binary written into the workspace.
	if err := run("build", "go", "build", "-o", os.DevNull, "./..."); err != nil {
		return nil, err
	}
	if pkgs := goPackages(dir, files); len(pkgs) > 0 {
		if err := run("vet", append([]string{"go", "vet"}, pkgs...)...); err != nil {
			return nil, err
		}
	}
	if gofiles := goFiles(dir, files); len(gofiles) > 0 {
		if err := run("gofmt", append([]string{"gofmt", "-l"}, gofiles...)...); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// positionRE matches "file.go:12:5: message" and "file.go:12: message".
var positionRE = regexp.MustCompile(`^(?:vet: )?(\S+\.go):\d+(?::\d+)?: (.*)$`)

// toolFindings reads a failed go build or go vet's output.
func toolFindings(tool, dir string, out string) []finding {
	prefixes := []string{dir + string(filepath.Separator)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		prefixes = append(prefixes, real+string(filepath.Separator))
	}
	var fs []finding
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range prefixes {
			l = strings.ReplaceAll(l, p, "")
		}
		m := positionRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		file := strings.TrimPrefix(m[1], "./")
		fs = append(fs, finding{key: tool + ": " + file + ": " + m[2], text: tool + ": " + l})
	}
	if len(fs) == 0 {
		// No position (a module or package error): the first lines say it.
		msg := firstLines(out, 3)
		for _, p := range prefixes {
			msg = strings.ReplaceAll(msg, p, "")
		}
		fs = append(fs, finding{key: tool + ": " + firstLines(msg, 1), text: tool + ": " + msg})
	}
	return fs
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

func firstLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
			if len(keep) == n {
				break
			}
		}
	}
	return strings.Join(keep, " / ")
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
