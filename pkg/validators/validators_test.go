package validators

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/unidiff"
)

// The module the tests repair: the blame commit broke Add while adding Sub
// and Neg, and TestAdd fails since.
const (
	goMod = "module example.com/calc\n\ngo 1.22\n"

	calcGood = `package calc

// Add returns x+y.
func Add(x, y int) int {
	return x + y
}

// Mul returns x*y.
func Mul(x, y int) int {
	return x * y
}
`
	calcBroken = `package calc

// Add returns x+y.
func Add(x, y int) int {
	return x - y
}

// Mul returns x*y.
func Mul(x, y int) int {
	return x * y
}

// Sub returns x-y.
func Sub(x, y int) int {
	return x - y
}

// Neg returns -x.
func Neg(x int) int {
	return -x
}
`
	calcTest = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(1, 2); got != 3 {
		t.Fatalf("Add(1, 2) = %d, want 3", got)
	}
}

func TestMul(t *testing.T) {
	if got := Mul(2, 3); got != 6 {
		t.Fatalf("Mul(2, 3) = %d, want 6", got)
	}
}
`
	testAdd = "example.com/calc/calc.TestAdd"
)

// fixed is calcBroken with Add mended: one hunk of the blame undone.
var fixed = strings.Replace(calcBroken, "return x - y\n}\n\n// Mul", "return x + y\n}\n\n// Mul", 1)

// fixture is a repository whose last commit (the blame) broke TestAdd.
type fixture struct {
	repo  gitrepo.Repo
	base  string
	blame gitrepo.Commit
}

// newFixture builds the repository; extra files go into both commits.
func newFixture(t *testing.T, extra map[string]string) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"go.mod": goMod, "calc/calc.go": calcGood, "calc/calc_test.go": calcTest}
	for k, v := range extra {
		files[k] = v
	}
	write(t, dir, files)
	if _, err := repo.CommitAll(ctx, "calc: add and mul"); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"calc/calc.go": calcBroken})
	base, err := repo.CommitAll(ctx, "calc: add Sub and Neg")
	if err != nil {
		t.Fatal(err)
	}
	blame, err := repo.Show(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{repo: repo, base: base, blame: blame}
}

// input changes the work tree (files with "" content are deleted) and
// describes the change as a candidate.
func (f *fixture) input(t *testing.T, change map[string]string) Input {
	t.Helper()
	write(t, f.repo.Dir, change)
	patch, err := f.repo.Diff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		Dir:   f.repo.Dir,
		Base:  f.base,
		Patch: patch,
		Lang:  golang.Driver{},
		Task: task.Task{
			ID:       "t1",
			Commit:   f.base,
			Failures: []task.Failure{{Package: "example.com/calc/calc", Test: "TestAdd", Message: "Add(1, 2) = -1, want 3"}},
			Bisection: task.Bisection{
				Blame: f.base, Subject: f.blame.Subject,
			},
		},
		BlameDiff: f.blame.Diff,
	}
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if body == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func check(t *testing.T, cfg Config, in Input) map[string]task.Gate {
	t.Helper()
	ctx := context.Background()
	before, err := gitrepo.Repo{Dir: in.Dir}.Git(ctx, "status", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	v := New(cfg, zaptest.NewLogger(t))
	gates, err := v.Check(ctx, in)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	var names []string
	byName := map[string]task.Gate{}
	for _, g := range gates {
		names = append(names, g.Name)
		byName[g.Name] = g
		t.Logf("%s: %s: %s", g.Name, g.Verdict, g.Detail)
	}
	if got, want := strings.Join(names, ","), "integrity,revert,static,oracle,regression"; got != want {
		t.Fatalf("gates = %s, want %s", got, want)
	}
	after, err := gitrepo.Repo{Dir: in.Dir}.Git(ctx, "status", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("Check changed the workspace: status before\n%s\nafter\n%s", before, after)
	}
	return byName
}

func want(t *testing.T, gates map[string]task.Gate, name, verdict string, detail ...string) {
	t.Helper()
	g := gates[name]
	if g.Verdict != verdict {
		t.Errorf("%s: verdict %s, want %s (detail: %s)", name, g.Verdict, verdict, g.Detail)
	}
	for _, d := range detail {
		if !strings.Contains(g.Detail, d) {
			t.Errorf("%s: detail %q does not mention %q", name, g.Detail, d)
		}
	}
}

func wantSkipped(t *testing.T, gates map[string]task.Gate, by string, names ...string) {
	t.Helper()
	for _, n := range names {
		want(t, gates, n, task.GateNotRun, "skipped: "+by+" failed")
	}
}

func TestGoodPatchPassesEveryGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": fixed}))
	want(t, gates, GateIntegrity, task.GatePass)
	want(t, gates, GateRevert, task.GatePass, "not a revert of", "keeps new Sub (calc/calc.go), new Neg (calc/calc.go)", "restores the lines", "Add (calc/calc.go:5)")
	want(t, gates, GateStatic, task.GatePass, "clean", "./calc")
	want(t, gates, GateOracle, task.GatePass, "3/3 runs passed", testAdd)
	want(t, gates, GateRegression, task.GatePass, "go test ./calc: 2 tests passed")
	if !task.Passed(mapGates(gates)) {
		t.Error("task.Passed = false for a good patch")
	}
}

func mapGates(m map[string]task.Gate) []task.Gate {
	var gs []task.Gate
	for _, g := range m {
		gs = append(gs, g)
	}
	return gs
}

func TestIntegrity(t *testing.T) {
	t.Parallel()
	withSkip := strings.Replace(calcTest, "func TestAdd(t *testing.T) {\n", "func TestAdd(t *testing.T) {\n\tt.Skip(\"flaky\")\n", 1)
	weakened := strings.Replace(calcTest, "got != 3", "got != -1", 1)
	noAssert := strings.Replace(calcTest, "\tif got := Add(1, 2); got != 3 {\n\t\tt.Fatalf(\"Add(1, 2) = %d, want 3\", got)\n\t}\n", "\t_ = Add(1, 2)\n", 1)
	noTest := strings.Replace(calcTest, "func TestAdd(", "func testAdd(", 1)
	for _, c := range []struct {
		name   string
		cfg    Config
		change map[string]string
		detail []string
	}{
		{"adds t.Skip", Config{AllowTestEdits: true}, map[string]string{"calc/calc_test.go": withSkip},
			[]string{`calc/calc_test.go:6: adds a skip: t.Skip("flaky")`}},
		{"edits a test file", Config{}, map[string]string{"calc/calc_test.go": weakened},
			[]string{"calc/calc_test.go: edits test file (test edits are not allowed", "removes an assertion: if got := Add(1, 2); got != 3 {"}},
		{"removes an assertion", Config{AllowTestEdits: true}, map[string]string{"calc/calc_test.go": noAssert},
			[]string{`removes an assertion: t.Fatalf("Add(1, 2) = %d, want 3", got)`}},
		{"deletes a test", Config{AllowTestEdits: true}, map[string]string{"calc/calc_test.go": noTest},
			[]string{"calc/calc_test.go:5: deletes test TestAdd"}},
		{"edits go.mod", Config{}, map[string]string{"calc/calc.go": fixed, "go.mod": goMod + "\ntoolchain go1.22.0\n"},
			[]string{"go.mod: adds the toolchain line go1.22.0 (the toolchain line chooses the Go toolchain that is downloaded and run; the repository's policy does not allow it)"}},
		{"edits CI", Config{}, map[string]string{"calc/calc.go": fixed, ".github/workflows/ci.yml": "on: push\n"},
			[]string{".github/workflows/ci.yml: adds a CI configuration file (CI configuration decides what CI runs and checks, with the repository's secrets; the repository's policy does not allow it)"}},
		{"outside the allowed paths", Config{AllowedPaths: []string{"lib/**"}}, map[string]string{"calc/calc.go": fixed},
			[]string{"calc/calc.go: outside the allowed paths (lib/**)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			gates := check(t, c.cfg, f.input(t, c.change))
			want(t, gates, GateIntegrity, task.GateFail, c.detail...)
			wantSkipped(t, gates, GateIntegrity, GateStatic, GateOracle, GateRegression)
		})
	}
}

func TestIntegrityAllowsNewTestsWhenPolicySays(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	more := calcTest + "\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Fatal(\"Sub\")\n\t}\n}\n"
	gates := check(t, Config{AllowTestEdits: true, AllowedPaths: []string{"calc"}}, f.input(t, map[string]string{"calc/calc.go": fixed, "calc/calc_test.go": more}))
	want(t, gates, GateIntegrity, task.GatePass, "1 of them test files")
	want(t, gates, GateRegression, task.GatePass, "3 tests passed")
}

func TestRevert(t *testing.T) {
	t.Parallel()
	t.Run("whole blame commit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": calcGood}))
		want(t, gates, GateIntegrity, task.GatePass)
		want(t, gates, GateRevert, task.GateFail, "reverts "+task.Short(f.base)+` ("calc: add Sub and Neg")`, "removes Sub, which it added; removes Neg, which it added")
		wantSkipped(t, gates, GateRevert, GateStatic, GateOracle, GateRegression)
	})
	t.Run("part of what the blame commit was for", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		// Add mended and Neg removed: Sub is kept, but Neg, which the
		// culprit was for too, is thrown away.
		partial := strings.Replace(fixed, "\n// Neg returns -x.\nfunc Neg(x int) int {\n\treturn -x\n}\n", "", 1)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": partial}))
		want(t, gates, GateRevert, task.GateFail, "reverts", "removes Neg, which it added")
	})
	t.Run("one hunk of it", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		in := f.input(t, map[string]string{"calc/calc.go": fixed})
		g, err := New(Config{}, nil).revert(context.Background(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
		if err != nil || g.Verdict != task.GatePass {
			t.Fatalf("revert = %+v, %v; want a pass", g, err)
		}
	})
	t.Run("no blame", func(t *testing.T) {
		t.Parallel()
		g, err := New(Config{}, nil).revert(context.Background(), &candidate{in: Input{Patch: "x"}})
		if err != nil || g.Verdict != task.GatePass || !strings.Contains(g.Detail, "no blame diff") {
			t.Fatalf("revert = %+v, %v; want a pass saying there is no blame", g, err)
		}
	})
}

func mustParse(t *testing.T, patch string) []unidiff.File {
	t.Helper()
	fs, err := unidiff.Parse(patch)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

const vetBad = `package calc

import "fmt"

// Describe says what x is.
func Describe(x int) string {
	return fmt.Sprintf("%s", x)
}
`

// vetOld has a finding that go vet reports and go test's own vet does not.
const vetOld = `package calc

// Twice doubles x.
func Twice(x int) int {
	return 2 * x
	x++
	return x
}
`

func TestStatic(t *testing.T) {
	t.Parallel()
	t.Run("new vet finding", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": fixed, "calc/describe.go": vetBad}))
		want(t, gates, GateStatic, task.GateFail, "1 new finding(s)", "vet: calc/describe.go:7:", "Sprintf format %s has arg x of wrong type int")
		wantSkipped(t, gates, GateStatic, GateOracle, GateRegression)
	})
	t.Run("vet finding already at base", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, map[string]string{"calc/twice.go": vetOld})
		// The patch moves the old finding by a line: still not new.
		gates := check(t, Config{}, f.input(t, map[string]string{
			"calc/calc.go":  fixed,
			"calc/twice.go": strings.Replace(vetOld, "// Twice", "// Twice\n//", 1),
		}))
		want(t, gates, GateStatic, task.GatePass, "no new finding", "1 finding(s) already at base")
		want(t, gates, GateOracle, task.GatePass)
	})
	t.Run("unformatted", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": strings.Replace(fixed, "return x + y", "return   x+y", 1)}))
		want(t, gates, GateStatic, task.GateFail, "calc/calc.go: not gofmt-formatted")
	})
	t.Run("does not build", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": strings.Replace(fixed, "return x + y", "return x + z", 1)}))
		want(t, gates, GateStatic, task.GateFail, "build: calc/calc.go:5:13: undefined: z")
	})
}

func TestOracle(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": strings.Replace(fixed, "return x + y", "return x * y", 1)}))
	want(t, gates, GateStatic, task.GatePass)
	want(t, gates, GateOracle, task.GateFail, "go test -count=3", testAdd+" failed: ", "Add(1, 2) = 2, want 3")
	wantSkipped(t, gates, GateOracle, GateRegression)
}

func TestRegression(t *testing.T) {
	t.Parallel()
	t.Run("breaks another test", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, nil)
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": strings.Replace(fixed, "return x * y", "return x + y", 1)}))
		want(t, gates, GateOracle, task.GatePass)
		want(t, gates, GateRegression, task.GateFail, "1 new failure(s)", "example.com/calc/calc.TestMul: ", "Mul(2, 3) = 5, want 6")
	})
	t.Run("failing at base too", func(t *testing.T) {
		t.Parallel()
		old := "package calc\n\nimport \"testing\"\n\nfunc TestOld(t *testing.T) {\n\tt.Fatal(\"broken for ages\")\n}\n"
		f := newFixture(t, map[string]string{"calc/old_test.go": old})
		gates := check(t, Config{}, f.input(t, map[string]string{"calc/calc.go": fixed}))
		want(t, gates, GateRegression, task.GatePass, "no new failure", "not blamed: example.com/calc/calc.TestOld")
	})
}

func TestCheckStopsOnCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	in := f.input(t, map[string]string{"calc/calc.go": fixed})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gates, err := New(Config{}, zaptest.NewLogger(t)).Check(ctx, in)
	if err == nil {
		t.Fatalf("Check with a cancelled context = %+v, want an error", gates)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		glob, path string
		ok         bool
	}{
		{"pkg/**", "pkg/a/b.go", true},
		{"pkg", "pkg/a/b.go", true},
		{"pkg/*.go", "pkg/a.go", true},
		{"pkg/*.go", "lib/a.go", false},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "c.go", true},
		{"**/*.go", "README.md", false},
		{"internal/*/x.go", "internal/a/x.go", true},
		{"internal/*/x.go", "internal/a/b/x.go", false},
	} {
		v := New(Config{AllowedPaths: []string{c.glob}}, nil)
		if got := v.allowed(c.path); got != c.ok {
			t.Errorf("allowed(%q) with %q = %v, want %v", c.path, c.glob, got, c.ok)
		}
	}
}

// The gates hold no language of their own: an input without a driver is
// the caller's error, not Go.
func TestCheckNeedsADriver(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	in := f.input(t, map[string]string{"calc/calc.go": fixed})
	in.Lang = nil
	gates, err := New(Config{}, nil).Check(context.Background(), in)
	if !errors.Is(err, ErrNoLanguage) || len(gates) != 0 {
		t.Fatalf("Check without a driver = %+v, %v; want ErrNoLanguage", gates, err)
	}
}
