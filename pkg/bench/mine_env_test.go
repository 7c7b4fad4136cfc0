package bench

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
)

// steadyError is the flake error the mining tests ask for: a steady test
// runs three times in each direction (0.5^3 < 0.2) rather than the
// default's ten, which TestMineKeepsACoinFlipFixRarely (flaky_test.go)
// holds; a flaky test of these histories shows within its first three runs
// whatever the error asked.
const steadyError = 0.2

// cheapRuns are mine options whose flakiness check runs each test three
// times in each direction: enough for the steady tests of these histories.
func cheapRuns(dir, out string) MineOptions {
	return MineOptions{Repo: dir, Out: out, Runs: 2, FlakeError: steadyError, Languages: lang.New(golang.Driver{Tests: golang.Runner{Timeout: 5 * time.Minute}})}
}

// verdicts reads a mine's state file, the last verdict of each commit.
func verdicts(t *testing.T, out string) map[string]Verdict {
	t.Helper()
	vs := map[string]Verdict{}
	if err := readLines(StatePath(out), func(b []byte) error {
		var v Verdict
		err := json.Unmarshal(b, &v)
		vs[v.Commit] = v
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return vs
}

var damagedHistory = []string{
	`start
-- go.mod --
module example.com/calc

go 1.21
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a - b }
-- mul.go --
package calc

// Mul returns a times b.
func Mul(a, b int) int { return a + b }
-- notes.txt --
one
`,
	`Fix Mul
-- mul.go --
package calc

// Mul returns a times b.
func Mul(a, b int) int { return a * b }
-- mul_test.go --
package calc

import "testing"

func TestMul(t *testing.T) {
	if Mul(2, 3) != 6 {
		t.Fatal("Mul(2, 3) != 6")
	}
}
`,
	`Fix Add
-- calc.go --
package calc

// Add returns a plus b.
func Add(a, b int) int { return a + b }
-- add_test.go --
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add(2, 3) != 5")
	}
}
-- notes.txt --
two
`,
	`Notes
-- notes.txt --
three
`,
}

// A git object missing from the clone (notes.txt as the Add fix left it)
// skips the two commits whose diffs need it, naming it; the mine goes on to
// the older fix, and no git output with NUL bytes reaches the reasons or
// the progress lines.
func TestMineSkipsCommitsWhoseObjectsAreMissing(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir, shas := buildHistory(t, ctx, damagedHistory)
	r := gitrepo.Repo{Dir: dir}
	blob, err := r.Git(ctx, "rev-parse", shas[2]+":notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	blob = strings.TrimSpace(blob)
	if err := os.Remove(filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	var progress bytes.Buffer
	o := cheapRuns(dir, out)
	o.Progress = NewProgress(&progress, "commits")
	sum, err := Mine(ctx, o)
	if err != nil {
		t.Fatalf("mine: %v", err)
	}
	vs := verdicts(t, out)
	for _, i := range []int{2, 3} {
		if v := vs[shas[i]]; v.Skip != SkipMissing || !strings.Contains(v.Reason, blob) || v.Retry {
			t.Errorf("commit %d: %+v, want %s naming %s", i, v, SkipMissing, blob)
		}
	}
	if v := vs[shas[1]]; !v.Qualified {
		t.Errorf("the fix older than the damage: %+v", v)
	}
	if sum.Skipped[SkipMissing] != 2 || sum.Qualified != 1 {
		t.Errorf("summary: %+v", sum)
	}
	state, _ := os.ReadFile(StatePath(out))
	if bytes.ContainsRune(state, 0) || bytes.ContainsRune(progress.Bytes(), 0) || strings.ContainsRune(sum.Report(o, time.Second), 0) {
		t.Errorf("NUL bytes in the state, the progress or the summary")
	}
	if rep := sum.Report(o, time.Second); !strings.Contains(rep, SkipMissing+" 2") {
		t.Errorf("report: %s", rep)
	}
}

// fileProxy writes example.com/dep v1.0.0 as a module proxy in dir (the
// layout GOPROXY=file:// reads).
func fileProxy(t *testing.T, dir string) {
	t.Helper()
	v := filepath.Join(dir, "example.com", "dep", "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/dep\n\ngo 1.21\n"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, data := range map[string]string{
		"go.mod": mod,
		"dep.go": "package dep\n\n// Two is 2.\nconst Two = 2\n",
	} {
		w, err := zw.Create("example.com/dep@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"list":        "v1.0.0\n",
		"v1.0.0.info": `{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`,
		"v1.0.0.mod":  mod,
		"v1.0.0.zip":  zb.String(),
	} {
		if err := os.WriteFile(filepath.Join(v, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var depHistory = []string{
	history[0] + `-- double.go --
package calc

// Double is n times two.
func Double(n int) int { return n + 2 }
`,
	history[1], // Fix Add: qualifies
	`Fix Double through the dep (its module fetched by the setup step)
-- go.mod --
module example.com/calc

go 1.21

require example.com/dep v1.0.0
-- double.go --
package calc

import "example.com/dep"

// Double is n times two.
func Double(n int) int { return n * dep.Two }
-- double_test.go --
package calc

import "testing"

func TestDouble(t *testing.T) {
	if Double(3) != 6 {
		t.Fatal("Double(3) != 6")
	}
}
`,
}

// A commit whose module versions the setup step cannot fetch (the module
// proxy not there yet) is skipped for the environment: it does not count
// against --max, the fix older than it is still examined, and the next
// run, with the proxy there, tries it again and mines it. (The sandbox's
// side, the fetch into the repository's own module cache that offline
// builds read, is TestGoSetupFetchesWhatTheOfflineBuildReads.)
func TestMineRetriesACommitWhoseModulesCouldNotBeFetched(t *testing.T) {
	ctx := testCtx(t)
	proxy := filepath.Join(t.TempDir(), "proxy")
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(proxy))
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-modcacherw -mod=mod")
	t.Setenv("GONOSUMDB", "example.com")
	dir, shas := buildHistory(t, ctx, depHistory[:3])
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	o := cheapRuns(dir, out)
	o.Max = 1
	sum, err := Mine(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(t, out)[shas[2]]
	if v.Skip != SkipModules || !v.Retry || v.Examined || !strings.Contains(v.Reason, "go mod download") {
		t.Fatalf("the commit whose module could not be fetched: %+v", v)
	}
	if sum.Examined != 1 || sum.Qualified != 1 || sum.Retry[SkipModules] != 1 || sum.Skipped[SkipModules] != 0 {
		t.Fatalf("first run: %+v", sum)
	}
	if rep := sum.Report(o, time.Second); !strings.Contains(rep, "tried again by the next run: "+SkipModules+" 1") {
		t.Errorf("report: %s", rep)
	}

	fileProxy(t, proxy)
	o.Max = 2
	sum, err = Mine(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts(t, out)[shas[2]]; v.Retry || !v.Qualified {
		t.Fatalf("the commit tried again: %+v", v)
	}
	if sum.Examined != 2 || sum.Qualified != 2 || len(sum.Retry) != 0 {
		t.Fatalf("second run: %+v", sum)
	}
}

// git's complaint is found among the listing it printed before it: the
// object it names, and the line, without the listing or its NUL bytes.
func TestMissingObjectIsReadFromGitsComplaint(t *testing.T) {
	obj := "b5b1a9dec615d54d22dd909fc8990d31e49de1af"
	for _, c := range []struct{ err, obj string }{
		{"git log --first-parent: exit 128: \x00abc\n- fmt.Println(\"error:\", err)\n// error: <nil>\nfatal: unable to read " + obj, obj},
		{"git checkout: exit 128: error: unable to read sha1 file of notes.txt (" + obj + ")\nfatal: bad object", obj},
		{"git log: exit 128: fatal: bad object " + obj, obj},
		// The command line names commits; the complaint, the object.
		{"git diff-tree -r --numstat 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 --: exit 128: fatal: unable to read " + obj, obj},
		{"git log: exit 128: fatal: ambiguous argument 'x'", ""},
		{"git log: exit 0: - t.Fatalf(\"error: could not read " + obj + "\")", ""},
	} {
		err := errors.New(c.err)
		if got := missingObject(err); got != c.obj {
			t.Errorf("missingObject(%q) = %q, want %q", c.err, got, c.obj)
		}
		if text := cleanText(c.err, 300); strings.ContainsRune(text, 0) || strings.Contains(text, "Println") {
			t.Errorf("cleanText(%q) = %q", c.err, text)
		}
	}
}
