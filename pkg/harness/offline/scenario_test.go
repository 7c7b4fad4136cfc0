package offline_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
)

// scenario is a failure for the offline policy, read from one txtar archive
// under testdata. The archive's comment says what the failure is and, on
// lines of their own, which test fails ("failing: TestX") and whether a
// repair template can fix it ("fixable: true"); its files, named
// COMMIT/PATH, are the repository's history, commit by commit from 0.
type scenario struct {
	name    string // the archive's name without its order prefix ("01-")
	about   string
	failing string
	fixable bool
	// revert: the only change that passes undoes all the blame commit
	// did to the code, which the policy tries last and does not keep.
	revert bool
	// fixes are the lines a right patch may add, as they read after it
	// (each "fix:" line; one of them).
	fixes []string
	// misses are the corpus's modes ("unblamed") in which the policy is
	// known not to find the fix within the budget ("miss:"): logged and
	// counted, not failed.
	misses  []string
	commits [][]txtar.File // each commit's files, named by their paths
}

// loadScenarios reads the scenarios of testdata/dir, in the order of their
// archives' names.
func loadScenarios(tb testing.TB, dir string) []scenario {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no scenarios in testdata/%s: %v", dir, err)
	}
	sort.Strings(paths)
	var out []scenario
	for _, p := range paths {
		out = append(out, loadScenario(tb, p))
	}
	return out
}

func loadScenario(tb testing.TB, file string) scenario {
	tb.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	name := strings.TrimSuffix(filepath.Base(file), ".txtar")
	if _, rest, ok := strings.Cut(name, "-"); ok {
		name = rest
	}
	sc := scenario{name: name}
	var about []string
	for _, l := range strings.Split(string(ar.Comment), "\n") {
		switch k, v, _ := strings.Cut(l, ": "); k {
		case "failing":
			sc.failing = v
		case "fix":
			sc.fixes = append(sc.fixes, v)
		case "miss":
			sc.misses = append(sc.misses, v)
		case "fixable":
			if sc.fixable, err = strconv.ParseBool(v); err != nil {
				tb.Fatalf("%s: fixable: %v", file, err)
			}
		case "revert":
			if sc.revert, err = strconv.ParseBool(v); err != nil {
				tb.Fatalf("%s: revert: %v", file, err)
			}
		default:
			about = append(about, l)
		}
	}
	sc.about = strings.TrimSpace(strings.Join(about, "\n"))
	for _, f := range ar.Files {
		n, path, ok := strings.Cut(f.Name, "/")
		k, err := strconv.Atoi(n)
		if !ok || err != nil || k < 0 || k > len(sc.commits) {
			tb.Fatalf("%s: file %q is not named COMMIT/PATH, commits in order from 0", file, f.Name)
		}
		if k == len(sc.commits) {
			sc.commits = append(sc.commits, nil)
		}
		sc.commits[k] = append(sc.commits[k], txtar.File{Name: path, Data: f.Data})
	}
	if sc.failing == "" || len(sc.commits) == 0 {
		tb.Fatalf("%s: no failing test or no files", file)
	}
	return sc
}

// scenarioNamed is the scenario of testdata/dir named name.
func scenarioNamed(tb testing.TB, dir, name string) scenario {
	tb.Helper()
	for _, sc := range loadScenarios(tb, dir) {
		if sc.name == name {
			return sc
		}
	}
	tb.Fatalf("no scenario %q in testdata/%s", name, dir)
	return scenario{}
}

// repo makes the scenario's repository in a new directory, one commit per
// stage with the subjects given, and returns the directory and the commits.
func (sc scenario) repo(tb testing.TB, ctx context.Context, subjects ...string) (string, []string) {
	tb.Helper()
	if len(subjects) != len(sc.commits) {
		tb.Fatalf("%s has %d commits, %d subjects given", sc.name, len(sc.commits), len(subjects))
	}
	dir := filepath.Join(tb.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		tb.Fatal(err)
	}
	var shas []string
	for i, files := range sc.commits {
		for _, f := range files {
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		sha, err := repo.CommitAll(ctx, subjects[i])
		if err != nil {
			tb.Fatal(err)
		}
		shas = append(shas, sha)
	}
	return dir, shas
}
