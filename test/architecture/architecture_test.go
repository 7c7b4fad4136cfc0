// Package architecture checks the shape of the code base, so that it keeps
// without anyone policing it: which layer may import which, that value
// types and leaf packages stay free of the rest, that test support stays in
// tests, that no package grows into a hub and no file into a room too big to
// read, and that docs/architecture.md names every package.
package architecture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/redfix/redfix"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath   string
	Dir          string
	Imports      []string // without tests'
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	TestImports  []string
	XTestImports []string
}

// rel is the package's path in the module ("pkg/harness").
func (p pkg) rel() string { return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/") }

// own are the module's packages p imports (tests' imports apart).
func (p pkg) own() []string {
	var out []string
	for _, i := range p.Imports {
		if i == module || strings.HasPrefix(i, module+"/") {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(i, module), "/"))
		}
	}
	return out
}

var listed []pkg

// packages lists the module's packages, once.
func packages(t *testing.T) []pkg {
	t.Helper()
	if listed != nil {
		return listed
	}
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, p)
	}
	return listed
}

// root is the module's top directory.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// under reports whether rel is dir or inside it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// testSupport are packages that exist for tests: nothing else imports them.
// internal/testtime is CI's reader of redfix's own go test output, a
// command of the suite's.
func testSupport(rel string) bool {
	for _, s := range []string{"internal/testsvc", "internal/testtime", "pkg/harness/harnesstest", "pkg/forge/github/ghtest", "pkg/forge/forgetest", "pkg/forge/fakeforge", "pkg/llm/llmtest", "pkg/embedded/embeddedtest", "pkg/report/reporttest", "pkg/markdown/markdowntest", "pkg/config/logtest"} {
		if rel == s {
			return true
		}
	}
	return false
}

// TestLayers holds the rules of who may import whom.
func TestLayers(t *testing.T) {
	rules := []struct {
		from   string   // a package and those under it
		forbid []string // packages (and those under them) it may not import
		why    string
	}{
		{"pkg/harness", []string{"pkg/app", "pkg/triage", "pkg/publish", "pkg/worker", "pkg/store", "pkg/server", "pkg/ingest", "pkg/queue", "pkg/stream", "pkg/forge", "pkg/validators", "pkg/judge"},
			"the agent works on a workspace and a task; what comes before (triage) and after (gates, publishing) is not its business"},
		{"pkg/harness/tools", []string{"pkg/harness/offline", "pkg/harness/llmpolicy", "pkg/llm"},
			"a tool works on the workspace through the interfaces it declares (a language, a patcher); the policies are above it and the models outside it"},
		{"pkg/validators", []string{"pkg/app", "pkg/publish", "pkg/worker", "pkg/store", "pkg/forge", "pkg/triage", "pkg/harness"},
			"gates judge a patch; they never publish, store or repair"},
		{"pkg/judge", []string{"pkg/app", "pkg/publish", "pkg/worker", "pkg/store", "pkg/forge", "pkg/triage", "pkg/harness", "pkg/validators"},
			"the judge reads a patch and its evidence; it never publishes"},
		{"pkg/triage", []string{"pkg/app", "pkg/harness", "pkg/worker", "pkg/publish", "pkg/validators", "pkg/judge", "pkg/server"},
			"triage decides what is worth repairing; it never repairs"},
		{"pkg/publish", []string{"pkg/app", "pkg/harness", "pkg/worker", "pkg/triage", "pkg/validators", "pkg/judge"},
			"publishing turns a checked patch into a pull request"},
		{"pkg/gitrepo", []string{"pkg/workspace", "pkg/harness", "pkg/triage", "pkg/app"}, "git is below the checkouts that use it"},
		{"pkg/sandbox", []string{"pkg/gitrepo", "pkg/workspace", "pkg/harness", "pkg/triage", "pkg/app"}, "confinement is below everything that runs commands"},
		{"pkg/history", []string{"pkg/app", "pkg/store", "pkg/server", "pkg/forge", "pkg/publish", "pkg/harness", "pkg/validators", "pkg/judge"},
			"the history turns outcomes into the dashboard's series, through a store it declares; it never publishes or serves"},
		{"pkg/store", []string{"pkg/app", "pkg/triage", "pkg/worker", "pkg/server", "pkg/forge", "pkg/history", "pkg/ingest", "pkg/queue", "pkg/stream", "pkg/publish"},
			"the store keeps values (pkg/task, pkg/series); it knows nothing of those who keep them"},
	}
	for _, p := range packages(t) {
		rel := p.rel()
		if under(rel, "cmd") {
			continue
		}
		for _, imp := range p.own() {
			if imp == "pkg/app" && !under(rel, "cmd") {
				t.Errorf("%s imports pkg/app: only the commands (cmd/) use the wiring", rel)
			}
			if imp == "pkg/store" && rel != "pkg/app" {
				t.Errorf("%s imports pkg/store: only the wiring (pkg/app) makes the store; the others declare the interfaces it satisfies and take its values from pkg/task and pkg/series", rel)
			}
			if testSupport(imp) {
				t.Errorf("%s imports %s, which is test support: only tests may", rel, imp)
			}
			for _, r := range rules {
				if !under(rel, r.from) {
					continue
				}
				for _, f := range r.forbid {
					if under(imp, f) {
						t.Errorf("%s imports %s: %s", rel, imp, r.why)
					}
				}
			}
		}
	}
}

// TestLeaves: value types and small tools import nothing of redfix's, so
// that anything may use them.
func TestLeaves(t *testing.T) {
	leaves := map[string][]string{
		"pkg/task":      nil,
		"pkg/job":       {"pkg/task"},
		"pkg/untrusted": nil,
		"pkg/clip":      nil,
		"pkg/unidiff":   nil,
		"pkg/termsafe":  nil,
		"pkg/markdown":  nil,
		"pkg/repourl":   nil,
		"pkg/prompt":    nil,
		"pkg/series":    nil,
	}
	for _, p := range packages(t) {
		allowed, ok := leaves[p.rel()]
		if !ok {
			continue
		}
		for _, imp := range p.own() {
			okImp := false
			for _, a := range allowed {
				okImp = okImp || imp == a
			}
			if !okImp {
				t.Errorf("%s imports %s: it is a leaf (allowed: %v)", p.rel(), imp, allowed)
			}
		}
	}
}

// TestNoHub: outside the commands and the wiring, no package imports more
// than a third of the others; the figures are printed.
func TestNoHub(t *testing.T) {
	all := packages(t)
	limit := len(all) / 3
	type count struct {
		rel string
		n   int
	}
	var counts []count
	for _, p := range all {
		counts = append(counts, count{p.rel(), len(p.own())})
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i].n > counts[j].n })
	for i, c := range counts {
		if i < 8 {
			t.Logf("%-28s imports %2d of the module's %d packages", c.rel, c.n, len(all)-1)
		}
		if under(c.rel, "cmd") || c.rel == "pkg/app" || testSupport(c.rel) || under(c.rel, "test") {
			continue
		}
		if c.n > limit {
			t.Errorf("%s imports %d of the module's packages, more than a third (%d)", c.rel, c.n, limit)
		}
	}
}

// maxLines bounds a Go source file, tests included: a bigger one is rooms
// that want splitting by concern.
const maxLines = 600

func TestNoFileOverMaxLines(t *testing.T) {
	type file struct {
		path  string
		lines int
	}
	var files []file
	for _, p := range packages(t) {
		for _, names := range [][]string{p.GoFiles, p.TestGoFiles, p.XTestGoFiles} {
			for _, n := range names {
				path := filepath.Join(p.Dir, n)
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				lines := 0
				sc := bufio.NewScanner(f)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					lines++
				}
				f.Close()
				rel, _ := filepath.Rel(root(t), path)
				files = append(files, file{rel, lines})
			}
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].lines > files[j].lines })
	for i, f := range files {
		if i < 10 {
			t.Logf("%5d %s", f.lines, f.path)
		}
		if f.lines > maxLines {
			t.Errorf("%s has %d lines, more than %d: split it by concern", f.path, f.lines, maxLines)
		}
	}
}

// TestArchitectureDocNamesEveryPackage: docs/architecture.md's table of
// parts names every package of the module.
func TestArchitectureDocNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packages(t) {
		rel := p.rel()
		if rel == "" {
			continue
		}
		if !bytes.Contains(doc, []byte("`"+rel+"`")) {
			t.Errorf("docs/architecture.md does not name %s (as `%s`)", rel, rel)
		}
	}
}
