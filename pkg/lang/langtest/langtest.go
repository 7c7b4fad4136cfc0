// Package langtest is the language drivers' conformance suite: one set of
// behavioural tests every driver passes (Run), on a small project of its
// language written as a txtar fixture. It holds a driver to what the seam
// promises (pkg/lang's Driver): it detects its checkout, tells test files,
// test data and code apart, sets the checkout up, names and resolves
// tests, runs one test, a failing one whose report it reads, and a file of
// them, lists and builds them, and indexes declarations; and, through the
// gates (pkg/validators), that the cheats the gates refuse are caught in
// its language: a skip added, an assertion weakened, a special case for
// the failing input, code detecting that it runs under test. An honest
// fix passes every gate.
//
// A fixture's sections:
//
//	-- conformance --         what the suite asks, "key: value" a line:
//	                          passing, failing, unknown (test ids: one that
//	                          passes, one that fails, one whose file or
//	                          package is not there), message (words of the
//	                          failing test's
//	                          failure), package (the package of both, as
//	                          RunPackages takes it), test-file, test-data,
//	                          source (a file of each kind), symbol (a file
//	                          and a function it declares)
//	-- files/PATH --          the project, at the commit under test
//	-- fix/PATH --            an honest fix of the failing test
//	-- cheat/KIND/PATH --     the cheats, KIND one of skip, assertion,
//	                          special and detect: the files a patch leaves
package langtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/validators"
)

// Cheats are the kinds of cheat every fixture holds, and the words the
// integrity gate's evidence must say of each.
var Cheats = map[string]string{
	"skip":      "adds a skip",
	"assertion": "assertion",
	"special":   "special-cases a value of the failing test",
	"detect":    "detects that it runs under test",
}

// fixture is a parsed conformance fixture.
type fixture struct {
	keys   map[string]string
	files  map[string]string
	fix    map[string]string
	cheats map[string]map[string]string
}

// load reads the fixture at path.
func load(t *testing.T, path string) fixture {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatalf("conformance fixture: %v", err)
	}
	f := fixture{keys: map[string]string{}, files: map[string]string{}, fix: map[string]string{}, cheats: map[string]map[string]string{}}
	for _, file := range ar.Files {
		switch name := file.Name; {
		case name == "conformance":
			for _, l := range strings.Split(string(file.Data), "\n") {
				if k, v, ok := strings.Cut(l, ":"); ok {
					f.keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
		case strings.HasPrefix(name, "files/"):
			f.files[strings.TrimPrefix(name, "files/")] = string(file.Data)
		case strings.HasPrefix(name, "fix/"):
			f.fix[strings.TrimPrefix(name, "fix/")] = string(file.Data)
		case strings.HasPrefix(name, "cheat/"):
			kind, rel, _ := strings.Cut(strings.TrimPrefix(name, "cheat/"), "/")
			if f.cheats[kind] == nil {
				f.cheats[kind] = map[string]string{}
			}
			f.cheats[kind][rel] = string(file.Data)
		default:
			t.Fatalf("conformance fixture %s: unknown section %s", path, name)
		}
	}
	for _, k := range []string{"passing", "failing", "unknown", "message", "package", "test-file", "test-data", "source", "symbol"} {
		if f.keys[k] == "" {
			t.Fatalf("conformance fixture %s: no %s", path, k)
		}
	}
	for kind := range Cheats {
		if len(f.cheats[kind]) == 0 {
			t.Fatalf("conformance fixture %s: no %s cheat", path, kind)
		}
	}
	if len(f.fix) == 0 {
		t.Fatalf("conformance fixture %s: no fix", path)
	}
	return f
}

// Run holds d to the seam's behaviour on the project of the fixture at
// path (see the package's comment). The commands run in t's context: a
// caller that wants them confined puts a sandbox in it first (Context).
func Run(t *testing.T, d lang.Driver, path string) {
	RunIn(t, t.Context(), d, path)
}

// RunIn is Run with the commands run in ctx.
func RunIn(t *testing.T, ctx context.Context, d lang.Driver, path string) {
	f := load(t, path)
	t.Run("files", func(t *testing.T) { f.kinds(t, d) })
	t.Run("detect and resolve", func(t *testing.T) { f.names(t, d) })
	t.Run("index", func(t *testing.T) { f.index(t, d) })
	t.Run("run", func(t *testing.T) { f.run(t, ctx, d) })
	t.Run("cheats", func(t *testing.T) {
		for kind := range Cheats {
			t.Run(kind, func(t *testing.T) { f.cheat(t, ctx, d, kind) })
		}
	})
	t.Run("honest fix", func(t *testing.T) { f.honest(t, ctx, d) })
}

// repo writes the project into a new git repository, commits it, then
// writes change over it (uncommitted); it returns the repository and the
// commit.
func (f fixture) repo(t *testing.T, change map[string]string) (gitrepo.Repo, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	repo, err := gitrepo.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, f.files)
	base, err := repo.CommitAll(ctx, "the project")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, change)
	return repo, base
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// kinds: test files, test data and code are told apart.
func (f fixture) kinds(t *testing.T, d lang.Driver) {
	tf, data, src := f.keys["test-file"], f.keys["test-data"], f.keys["source"]
	if !d.IsTestFile(tf) || d.IsTestFile(src) {
		t.Errorf("IsTestFile(%s) = %v, IsTestFile(%s) = %v; want a test file and code", tf, d.IsTestFile(tf), src, d.IsTestFile(src))
	}
	if !d.IsTestData(data) || d.IsTestData(src) {
		t.Errorf("IsTestData(%s) = %v, IsTestData(%s) = %v; want test data and code", data, d.IsTestData(data), src, d.IsTestData(src))
	}
	if !d.IsSource(src) || d.IsSource(data) {
		t.Errorf("IsSource(%s) = %v, IsSource(%s) = %v; want code and data", src, d.IsSource(src), data, d.IsSource(data))
	}
	repo, _ := f.repo(t, nil)
	if _, ok := d.PackageOf(repo.Dir, src); !ok {
		t.Errorf("PackageOf(%s): no package", src)
	}
}

// names: the checkout is the driver's, and its tests are named.
func (f fixture) names(t *testing.T, d lang.Driver) {
	repo, _ := f.repo(t, nil)
	if s := d.Detect(repo.Dir); s <= 0 {
		t.Errorf("Detect = %d: the driver does not know its own project", s)
	}
	if got, err := lang.New(d).For("conformance", repo.Dir); err != nil || got.Name() != d.Name() {
		t.Errorf("For = %v, %v", got, err)
	}
	for _, id := range []string{f.keys["passing"], f.keys["failing"]} {
		target, err := d.Resolve(repo.Dir, id)
		if err != nil || target.ID != id || target.Test == "" {
			t.Errorf("Resolve(%s) = %+v, %v; want the test, named as it was", id, target, err)
		}
	}
	if _, err := d.Resolve(repo.Dir, f.keys["unknown"]); !errors.Is(err, testrun.ErrNotFound) {
		t.Errorf("Resolve(%s) = %v; want testrun.ErrNotFound", f.keys["unknown"], err)
	}
}

// index: the declarations are found with the driver's parser.
func (f fixture) index(t *testing.T, d lang.Driver) {
	file, name, _ := strings.Cut(f.keys["symbol"], " ")
	repo, _ := f.repo(t, nil)
	ix, err := d.Index(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ix.FindFuncs(name) {
		if s.File == file && s.Line > 0 && s.EndLine >= s.Line {
			return
		}
	}
	t.Errorf("Index: no function %s in %s: %+v", name, file, ix.FindFuncs(name))
}

// run: the checkout is set up; one test runs and passes, the failing one
// fails and its report is read; the package runs, lists and builds.
func (f fixture) run(t *testing.T, ctx context.Context, d lang.Driver) {
	repo, _ := f.repo(t, nil)
	dir, passing, failing, pkg := repo.Dir, f.keys["passing"], f.keys["failing"], f.keys["package"]
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if o, err := d.Run(ctx, dir, []string{passing}, 1); err != nil || !contains(o.Passed, passing) || len(o.Failed) > 0 {
		t.Errorf("Run(%s) = %s, %v; want it passed\n%s", passing, o.Summary(), err, o.Output)
	}
	o, err := d.Run(ctx, dir, []string{failing}, 1)
	if err != nil || len(o.Failed) == 0 || o.Failed[0].ID() != failing || !strings.Contains(o.Failed[0].Message, f.keys["message"]) {
		t.Errorf("Run(%s) = %s, %v, failures %+v; want it failed saying %q\n%s", failing, o.Summary(), err, o.Failed, f.keys["message"], o.Output)
	}
	o, err = d.RunPackages(ctx, dir, []string{pkg})
	if err != nil || !contains(o.Passed, passing) || !failed(o, failing) {
		t.Errorf("RunPackages(%s) = %s, %v; want %s passed and %s failed\n%s", pkg, o.Summary(), err, passing, failing, o.Output)
	}
	if o, err := d.Build(ctx, dir, []string{pkg}); err != nil || len(o.Build) > 0 {
		t.Errorf("Build(%s) = %+v, %v", pkg, o.Build, err)
	}
	listed, err := d.List(ctx, dir, []string{pkg})
	if err != nil || !lists(t, d, dir, listed, passing) || !lists(t, d, dir, listed, failing) {
		t.Errorf("List(%s) = %+v, %v; want %s and %s", pkg, listed, err, passing, failing)
	}
}

// contains reports id among ids.
func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// failed reports id among the outcome's failures.
func failed(o testrun.Outcome, id string) bool {
	for _, f := range o.Failed {
		if f.ID() == id {
			return true
		}
	}
	return false
}

// lists reports the test id in a listing: under its target's package, by
// its name (or the name of the test it is a part of).
func lists(t *testing.T, d lang.Driver, dir string, listed []testrun.Listed, id string) bool {
	target, err := d.Resolve(dir, id)
	if err != nil {
		t.Errorf("Resolve(%s): %v", id, err)
		return false
	}
	for _, l := range listed {
		if l.ImportPath != target.ImportPath {
			continue
		}
		for _, name := range l.Tests {
			if target.Test == name || strings.HasPrefix(target.Test, name+"/") {
				return true
			}
		}
	}
	return false
}

// input is the patch that change makes to the project, for the gates, the
// failing test its task.
func (f fixture) input(t *testing.T, d lang.Driver, change map[string]string) validators.Input {
	t.Helper()
	repo, base := f.repo(t, change)
	patch, err := repo.Diff(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	target, err := d.Resolve(repo.Dir, f.keys["failing"])
	if err != nil {
		t.Fatal(err)
	}
	return validators.Input{
		Dir: repo.Dir, Base: base, Patch: patch, Lang: d,
		Task: task.Task{ID: "conformance", Commit: base, Failures: []task.Failure{{Package: target.ImportPath, Test: target.Test}}},
	}
}

// cheat: the integrity gate refuses the cheat of the kind, in the
// language's words, with test edits allowed (what is checked even then).
func (f fixture) cheat(t *testing.T, ctx context.Context, d lang.Driver, kind string) {
	in := f.input(t, d, f.cheats[kind])
	gates, err := validators.New(validators.Config{AllowTestEdits: true}, nil).Check(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	g := gate(gates, validators.GateIntegrity)
	if g.Verdict != task.GateFail || !strings.Contains(g.Detail, Cheats[kind]) {
		t.Errorf("integrity on the %s cheat: %s: %s; want a failure saying %q\npatch:\n%s", kind, g.Verdict, g.Detail, Cheats[kind], in.Patch)
	}
}

// honest: an honest fix passes every gate, its failing test run by the
// driver.
func (f fixture) honest(t *testing.T, ctx context.Context, d lang.Driver) {
	in := f.input(t, d, f.fix)
	if err := d.Setup(ctx, in.Dir); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	gates, err := validators.New(validators.Config{}, nil).Check(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gates {
		if g.Verdict != task.GatePass {
			t.Errorf("%s on the honest fix: %s: %s", g.Name, g.Verdict, g.Detail)
		}
	}
}

func gate(gates []task.Gate, name string) task.Gate {
	for _, g := range gates {
		if g.Name == name {
			return g
		}
	}
	return task.Gate{}
}
