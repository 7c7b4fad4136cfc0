package hostile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
)

// values fill the corpus' placeholders: where the marker is, the host file
// no output may quote.
type values struct {
	Marker   string // a file outside every sandbox: a line in it is an escape
	HostFile string // a host file that is no secret of redfix's: its text must not come out
	HostText string // what it holds
	// CanaryURL is a server on the host's loopback that no repository
	// code may reach.
	CanaryURL string
	// Victim is a host directory named like a checkout, outside every
	// sandbox, that nothing redfix removes may reach.
	Victim string
	// RootFile is a file only root may read (mode 0600), outside /tmp.
	RootFile string
}

// hostileRepo is one repository of the corpus, made into a git repository
// with commits 0, 1 (the culprit) and 2.
type hostileRepo struct {
	Name    string
	Dir     string
	Commits []string
	About   string
}

// buildRepo makes the repository of testdata/repos/NAME.txtar on top of
// testdata/base.txtar (testdata/pybase.txtar for a name starting with
// "py-"), under dir.
func buildRepo(t *testing.T, name, dir string, v values) hostileRepo {
	t.Helper()
	ctx := context.Background()
	baseName, subjects := "base.txtar", []string{"calc: Add", "calc: add Sub, tidy Add", "calc: notes"}
	if isPython(name) {
		baseName, subjects = "pybase.txtar", []string{"calc: add", "calc: add sub, tidy add", "calc: notes"}
	}
	base, err := txtar.ParseFile(filepath.Join("testdata", baseName))
	if err != nil {
		t.Fatal(err)
	}
	arc, err := txtar.ParseFile(filepath.Join("testdata", "repos", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	plant, err := os.ReadFile(filepath.Join("testdata", "plant.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("{{PLANT}}", string(plant)).Replace
	fillValues := strings.NewReplacer("{{MARKER}}", v.Marker, "{{HOST_FILE}}", v.HostFile,
		"{{CANARY_URL}}", v.CanaryURL, "{{VICTIM}}", v.Victim, "{{ROOT_FILE}}", v.RootFile)
	byCommit := map[int][]txtar.File{}
	for _, f := range append(base.Files, arc.Files...) {
		n, rest, ok := strings.Cut(f.Name, "/")
		k, err := strconv.Atoi(n)
		if !ok || err != nil {
			t.Fatalf("%s: file %q is not named COMMIT/PATH", name, f.Name)
		}
		f.Name = rest
		f.Data = []byte(fillValues.Replace(fill(string(f.Data))))
		byCommit[k] = append(byCommit[k], f)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int
	for k := range byCommit {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := hostileRepo{Name: name, Dir: dir, About: strings.TrimSpace(string(arc.Comment))}
	for _, k := range keys {
		var gitlinks []string
		for _, f := range byCommit[k] {
			path, kind := f.Name, ""
			if i := strings.LastIndexByte(path, '@'); i > 0 {
				path, kind = path[:i], path[i+1:]
			}
			p := filepath.Join(dir, filepath.FromSlash(path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "":
				err = os.WriteFile(p, f.Data, 0o644)
			case "exec":
				err = os.WriteFile(p, f.Data, 0o755)
			case "link":
				os.Remove(p)
				err = os.Symlink(strings.TrimSpace(string(f.Data)), p)
			case "gitlink":
				// A directory where the gitlink is, or committing every
				// change would take the gitlink away.
				err = os.MkdirAll(p, 0o755)
				gitlinks = append(gitlinks, path)
			default:
				err = fmt.Errorf("unknown kind %q", kind)
			}
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
		}
		for _, g := range gitlinks {
			// A submodule at a commit of another repository: its id is all
			// a gitlink holds.
			if _, err := repo.Git(ctx, "update-index", "--add", "--cacheinfo", "160000,5b2c3a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b,"+g); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := repo.CommitAll(ctx, subjects[k])
		if err != nil {
			t.Fatalf("%s: commit %d: %v", name, k, err)
		}
		out.Commits = append(out.Commits, sha)
	}
	return out
}

// Head is the repository's newest commit: the one CI saw fail.
func (r hostileRepo) Head() string { return r.Commits[len(r.Commits)-1] }

// Culprit is the commit that broke Add.
func (r hostileRepo) Culprit() string { return r.Commits[1] }

// goTestReport is a go test -json report of the failing tests at a commit:
// each "Test" or "Test/sub" with its message.
func goTestReport(pkg string, failing map[string]string) []byte {
	var b strings.Builder
	line := func(action, test, output string) {
		fmt.Fprintf(&b, `{"Action":%q,"Package":%q`, action, pkg)
		if test != "" {
			fmt.Fprintf(&b, `,"Test":%q`, test)
		}
		if output != "" {
			fmt.Fprintf(&b, `,"Output":%q`, output)
		}
		b.WriteString("}\n")
	}
	var names []string
	for n := range failing {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		parent, _, sub := strings.Cut(n, "/")
		line("run", parent, "")
		if sub {
			line("run", n, "")
		}
		line("output", n, "    calc_test.go:7: "+failing[n]+"\n")
		line("fail", n, "")
		if sub {
			line("fail", parent, "")
		}
	}
	line("output", "", "FAIL\n")
	line("fail", "", "")
	return []byte(b.String())
}

// isPython reports a scenario of the Python calc (pybase.txtar).
func isPython(name string) bool { return strings.HasPrefix(name, "py-") }

// fixedFile is the file the honest fix of a scenario changes.
func fixedFile(name string) string {
	if isPython(name) {
		return "calc.py"
	}
	return "calc.go"
}

// pytestReport is a JUnit report of pytest's dialect of the failing tests
// of test_calc.py: each name with its message.
func pytestReport(failing map[string]string) []byte {
	var names []string
	for n := range failing {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="%d" skipped="0" tests="%d">`, len(names), len(names))
	for _, n := range names {
		msg := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(failing[n])
		fmt.Fprintf(&b, `<testcase classname="test_calc" name="%s" file="test_calc.py" line="3"><failure message="AssertionError: %s">AssertionError: %s</failure></testcase>`, n, msg, msg)
	}
	b.WriteString("</testsuite></testsuites>\n")
	return []byte(b.String())
}
