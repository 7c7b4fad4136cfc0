// Package testrun runs Go tests in a checkout and says, test by test, what
// happened. A TESTID is a test as reports name it: "import/path.TestName",
// "import/path.TestName/subtest", or a bare "TestName[/subtest]" wherever that
// name is unambiguous in the repository.
package testrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/redfix/redfix/pkg/report"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/task"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Target is a resolved test, or a package (Test is "") when the id names a
// package of the module: a build failure's "test" is its package, which
// passes when the package and its tests build and every test passes.
type Target struct {
	ID         string // the canonical id: ImportPath.Test, or ImportPath
	ImportPath string
	Dir        string // relative to the module root, "./x/y" or "."
	Test       string // TestName or TestName/sub; "" for the package
}

// IsPackage says the target is a whole package.
func (t Target) IsPackage() bool { return t.Test == "" }

// Func is the top-level test function's name.
func (t Target) Func() string { name, _, _ := strings.Cut(t.Test, "/"); return name }

// ErrNotFound and ErrAmbiguous are returned by Resolve.
var (
	ErrNotFound  = errors.New("test not found")
	ErrAmbiguous = errors.New("test name is ambiguous")
)

// testFuncRE finds a test function, or an example (its output is checked
// as a test's assertions are, and go test -run selects it by name).
var testFuncRE = regexp.MustCompile(`(?m)^func (Test\w*\(\s*\w+ \*testing\.T\s*\)|Example\w*\(\s*\))`)

// Module reads the module path from dir/go.mod.
func Module(dir string) (string, error) {
	data, err := untrusted.ReadFile(dir, "go.mod", MaxSourceBytes)
	if err != nil {
		return "", fmt.Errorf("read go.mod: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("go.mod in %s has no module line", dir)
}

// Resolve finds the package that holds the test id in the module at dir. An
// id that is the import path of a package of the module (its directory
// exists) resolves to that package.
func Resolve(dir, id string) (Target, error) {
	mod, err := Module(dir)
	if err != nil {
		return Target{}, err
	}
	pkgPath, test := split(id)
	if pkgPath == "" && (id == mod || strings.HasPrefix(id, mod+"/")) {
		rel := "./" + strings.TrimPrefix(strings.TrimPrefix(id, mod), "/")
		if id == mod {
			rel = "."
		}
		if st, err := untrusted.Lstat(dir, rel); err != nil || !st.IsDir() {
			return Target{}, fmt.Errorf("resolve %s: no package %s in module %s: %w", id, id, mod, ErrNotFound)
		}
		return Target{ID: id, ImportPath: id, Dir: rel}, nil
	}
	if pkgPath != "" {
		rel := "."
		switch {
		case pkgPath == mod:
		case strings.HasPrefix(pkgPath, mod+"/"):
			rel = "./" + strings.TrimPrefix(pkgPath, mod+"/")
		default:
			return Target{}, fmt.Errorf("resolve %s: package %s is not in module %s: %w", id, pkgPath, mod, ErrNotFound)
		}
		return Target{ID: pkgPath + "." + test, ImportPath: pkgPath, Dir: rel, Test: test}, nil
	}
	fn, _, _ := strings.Cut(test, "/")
	dirs, err := findTestFunc(dir, fn)
	if err != nil {
		return Target{}, fmt.Errorf("resolve %s: %w", id, err)
	}
	switch len(dirs) {
	case 0:
		return Target{}, fmt.Errorf("resolve %s: no package of %s defines %s: %w", id, mod, fn, ErrNotFound)
	case 1:
	default:
		return Target{}, fmt.Errorf("resolve %s: defined in %s; name the package: %w", id, strings.Join(dirs, ", "), ErrAmbiguous)
	}
	rel := dirs[0]
	imp := mod
	if rel != "." {
		imp = mod + "/" + rel
		rel = "./" + rel
	}
	return Target{ID: imp + "." + test, ImportPath: imp, Dir: rel, Test: test}, nil
}

// Canonical resolves test names ("TestParse/sub", or full IDs) to the
// canonical IDs of the module at dir (see Resolve), each once, in the
// order given.
func Canonical(dir string, tests []string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, t := range tests {
		target, err := Resolve(dir, t)
		if err != nil {
			return nil, err
		}
		if !seen[target.ID] {
			seen[target.ID] = true
			ids = append(ids, target.ID)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("no test named")
	}
	return ids, nil
}

// split separates "import/path.TestX/sub" into its package and test; a bare
// "TestX/sub" has no package. The package ends at the first ".Test" (or
// ".Example") whose function part (up to the first '/') is an identifier.
func split(id string) (pkg, test string) {
	if strings.HasPrefix(id, "Test") || strings.HasPrefix(id, "Example") {
		return "", id
	}
	for off := 0; ; {
		i := nextFunc(id[off:])
		if i < 0 {
			return "", id
		}
		i += off
		fn, _, _ := strings.Cut(id[i+1:], "/")
		if identRE.MatchString(fn) {
			return id[:i], id[i+1:]
		}
		off = i + 1
	}
}

var identRE = regexp.MustCompile(`^(Test|Example)\w*$`)

// nextFunc is the index of the first ".Test" or ".Example" in id, -1 when
// there is none.
func nextFunc(id string) int {
	i, j := strings.Index(id, ".Test"), strings.Index(id, ".Example")
	if i < 0 || j >= 0 && j < i {
		return j
	}
	return i
}

// MaxSourceBytes is the largest source file redfix reads from a checkout to
// find tests in it; a larger one is passed over.
const MaxSourceBytes = 4 << 20

func findTestFunc(root, fn string) ([]string, error) {
	tree, err := untrusted.Open(root)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	var dirs []string
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		data, err := tree.ReadFile(untrusted.Rel(root, path), MaxSourceBytes)
		if err != nil {
			return nil // a link, a file too large to be a test's source
		}
		for _, m := range testFuncRE.FindAllSubmatch(data, -1) {
			if name, _, _ := strings.Cut(string(m[1]), "("); name == fn {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				rel = filepath.ToSlash(rel)
				if !seen[rel] {
					seen[rel] = true
					dirs = append(dirs, rel)
				}
			}
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
}

// RunPattern is the -run expression selecting exactly test (and its subtests).
func RunPattern(test string) string {
	parts := strings.Split(test, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// Runner runs go test.
type Runner struct {
	Timeout time.Duration // per go test invocation
	// MaxOutput caps the text output kept in Outcome.Output. The test
	// results are read from the whole of go test's output regardless.
	MaxOutput int
}

// Outcome is what one run of some tests did.
type Outcome struct {
	Passed []string       // canonical ids that passed every run
	Failed []task.Failure // tests whose own outcome was fail, one entry each
	Build  []task.Failure // packages that did not build
	// Missing are asked-for ids that did not run: unknown, or never
	// started, or started and cut off before they ended.
	Missing []string
	// Unknown says, for the asked-for names that no package defines (or
	// that several do), why they could not be run. They are in Missing too.
	Unknown []string
	// NotRun are tests that started but never ended, and did not cause
	// it: paused when a panic ended their test binary, for example.
	NotRun []string
	// Others are failures of tests that were not asked for but ran with
	// the asked ones: siblings of an asked subtest, or its parent failing
	// on its own.
	Others []task.Failure
	// Incomplete are packages whose run has no final result.
	Incomplete []string
	// Runs counts each test's runs by outcome (with count > 1 a test runs
	// several times), for the tests reported here.
	Runs map[string]report.Runs
	// Output is go test's text output (the events' output, and what the
	// go command printed itself), head and tail kept.
	Output string
	// Invocations counts the go test processes started.
	Invocations int
	TimedOut    bool
	Duration    time.Duration
}

// OK reports that every asked-for test ran and passed.
func (o Outcome) OK() bool {
	return len(o.Failed) == 0 && len(o.Build) == 0 && len(o.Missing) == 0 && !o.TimedOut
}

// Summary is a short human line.
func (o Outcome) Summary() string {
	s := fmt.Sprintf("%d passed, %d failed", len(o.Passed), len(o.Failed))
	if len(o.Build) > 0 {
		s += fmt.Sprintf(", %d packages did not build", len(o.Build))
	}
	if n := len(o.Missing) - len(o.Unknown); n > 0 {
		s += fmt.Sprintf(", %d did not run", n)
	}
	if len(o.Unknown) > 0 {
		s += fmt.Sprintf(", %d unknown", len(o.Unknown))
	}
	if len(o.Others) > 0 {
		s += fmt.Sprintf(", %d other tests that ran with them failed", len(o.Others))
	}
	if o.TimedOut {
		s += ", timed out"
	}
	return s
}

// Run runs the tests ids in the module at dir, count times each. The tests
// of one package run in one go test process. A subtest runs inside its
// top-level test, with the siblings that come before it, exactly as in a
// full run, and its outcome is read from that run: a subtest that depends
// on state its siblings leave behaves as it does in CI. Names that no
// package defines do not stop the others: they are reported in Unknown.
func (r Runner) Run(ctx context.Context, dir string, ids []string, count int) (Outcome, error) {
	if count < 1 {
		count = 1
	}
	byDir := map[string][]Target{}
	var order []string
	all := Outcome{Runs: map[string]report.Runs{}}
	for _, id := range ids {
		t, err := Resolve(dir, id)
		if err != nil {
			if errors.Is(err, ErrNotFound) || errors.Is(err, ErrAmbiguous) {
				all.Missing = append(all.Missing, id)
				all.Unknown = append(all.Unknown, err.Error())
				continue
			}
			return Outcome{}, err
		}
		if _, ok := byDir[t.Dir]; !ok {
			order = append(order, t.Dir)
		}
		byDir[t.Dir] = append(byDir[t.Dir], t)
	}
	for _, d := range order {
		targets := byDir[d]
		var funcs []string
		whole := false // a package target asks for every test of its package
		for _, t := range targets {
			whole = whole || t.IsPackage()
			if !t.IsPackage() && !slices.Contains(funcs, t.Func()) {
				funcs = append(funcs, t.Func())
			}
		}
		args := []string{"-count", fmt.Sprint(count), "-run", funcsPattern(funcs), d}
		if whole {
			args = []string{"-count", fmt.Sprint(count), d}
		}
		o, res, err := r.goTest(ctx, dir, args)
		if err != nil {
			return Outcome{}, err
		}
		all.Invocations++
		all.Output += o.Output
		all.TimedOut = all.TimedOut || o.TimedOut
		all.Duration += o.Duration
		all.Build = append(all.Build, o.Build...)
		all.Incomplete = append(all.Incomplete, o.Incomplete...)
		asked := func(id string) bool {
			for _, t := range targets {
				if id == t.ID || strings.HasPrefix(id, t.ID+"/") || (t.IsPackage() && strings.HasPrefix(id, t.ImportPath+".")) {
					return true
				}
			}
			return false
		}
		for _, f := range o.Failed {
			if asked(f.ID()) {
				all.Failed = append(all.Failed, f)
			} else {
				all.Others = append(all.Others, f)
			}
		}
		for _, p := range o.Passed {
			if asked(p) {
				all.Passed = append(all.Passed, p)
			}
		}
		for _, n := range o.NotRun {
			if asked(n) {
				all.NotRun = append(all.NotRun, n)
			}
		}
		for id, runs := range res.Runs {
			if asked(id) {
				all.Runs[id] = runs
			}
		}
		for _, t := range targets {
			if t.IsPackage() {
				all.addPackage(t, o, count)
				continue
			}
			if !ran(res, t) && len(o.Build) == 0 {
				all.Missing = append(all.Missing, t.ID)
			}
		}
	}
	return all, nil
}

// addPackage records a package target's result: it ran count times, and
// passed when the package built, none of its tests failed and the run ended
// in time.
func (all *Outcome) addPackage(t Target, o Outcome, count int) {
	failed := o.TimedOut || len(o.Build) > 0 || slices.Contains(o.Incomplete, t.ImportPath)
	for _, f := range o.Failed {
		if f.Package == t.ImportPath {
			failed = true
		}
	}
	if failed {
		all.Runs[t.ID] = report.Runs{Fail: count}
		return
	}
	all.Runs[t.ID] = report.Runs{Pass: count}
	all.Passed = append(all.Passed, t.ID)
}

// funcsPattern is the -run expression selecting exactly the top-level tests
// funcs, with all their subtests.
func funcsPattern(funcs []string) string {
	quoted := make([]string, len(funcs))
	for i, f := range funcs {
		quoted[i] = regexp.QuoteMeta(f)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// RunPackages runs every test of the packages (relative dirs like "./x", or
// patterns like "./...").
func (r Runner) RunPackages(ctx context.Context, dir string, pkgs []string) (Outcome, error) {
	args := append([]string{"-count", "1"}, pkgs...)
	o, _, err := r.goTest(ctx, dir, args)
	if err != nil {
		return Outcome{}, err
	}
	o.Invocations = 1
	return o, nil
}

// Build compiles the packages (relative dirs like "./x") and their tests,
// with go test's vet checks, running no test (go test -run '^$'): the
// packages that do not build are in Outcome.Build, with the compiler's
// messages.
func (r Runner) Build(ctx context.Context, dir string, pkgs []string) (Outcome, error) {
	args := append([]string{"-count", "1", "-run", "^$"}, pkgs...)
	o, _, err := r.goTest(ctx, dir, args)
	if err != nil {
		return Outcome{}, err
	}
	o.Invocations = 1
	return o, nil
}

// ran reports whether the test t has an outcome in the run: it, or one of
// its subtests, ended.
func ran(res report.Result, t Target) bool {
	for id, runs := range res.Runs {
		if (id == t.ID || strings.HasPrefix(id, t.ID+"/")) && runs.Pass+runs.Fail+runs.Skip > 0 {
			return true
		}
	}
	return false
}

// goTest runs go test -json with args. Its event stream comes back through
// a pipe and is parsed as it comes, whole: a run that prints megabytes is
// read to its end and never from a cut, and no file the tests could replace
// is read back.
func (r Runner) goTest(ctx context.Context, dir string, args []string) (Outcome, report.Result, error) {
	max := r.MaxOutput
	if max <= 0 {
		max = sandbox.DefaultMaxOutput
	}
	text := &report.Text{Head: max / 4, Tail: max * 3 / 4}
	pr, pw := io.Pipe()
	type parsed struct {
		rep report.Result
		err error
	}
	done := make(chan parsed, 1)
	go func() {
		rep, err := report.ParseGoTestStream(pr, text)
		// Whatever the parser left unread is drained, so that go test
		// never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, pr)
		done <- parsed{rep, err}
	}()
	cmd := append([]string{"go", "test", "-json"}, args...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: cmd, Timeout: r.Timeout, MaxOutput: r.MaxOutput, Stdout: pw})
	pw.Close()
	p := <-done
	if err != nil {
		return Outcome{}, report.Result{}, fmt.Errorf("go test in %s: %w", dir, err)
	}
	o := Outcome{TimedOut: res.TimedOut, Duration: res.Duration}
	rep, perr := p.rep, p.err
	o.Output = strings.TrimLeft(res.Output+text.String(), "\n")
	if perr != nil {
		if res.ExitCode != 0 || res.TimedOut {
			if res.TimedOut {
				return o, rep, nil
			}
			// go test printed no events: the build or the arguments failed.
			b := task.Failure{Output: o.Output}
			report.DescribeBuild(&b)
			o.Build = append(o.Build, b)
			return o, rep, nil
		}
		return Outcome{}, report.Result{}, fmt.Errorf("go test in %s: %w", dir, perr)
	}
	mod, _ := Module(dir)
	aliases := []string{}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		aliases = append(aliases, real)
	}
	rel := func(fs []task.Failure) []task.Failure {
		for i := range fs {
			report.Relativize(&fs[i], pkgDir(mod, fs[i].Package), dir, aliases...)
		}
		return fs
	}
	o.Passed = rep.Passed
	o.Failed = rel(rep.Failures)
	o.Build = rel(rep.BuildErrors)
	o.NotRun = rep.NotRun
	o.Incomplete = rep.Incomplete
	o.Runs = rep.Runs
	return o, rep, nil
}

// pkgDir is the directory of the package imp in module mod, relative to the
// module root ("." for the root package).
func pkgDir(mod, imp string) string {
	switch {
	case mod == "" || imp == mod:
		return "."
	case strings.HasPrefix(imp, mod+"/"):
		return strings.TrimPrefix(imp, mod+"/")
	}
	return "."
}

// Listed is the tests of one package, without running them.
type Listed struct {
	ImportPath string
	Tests      []string // top-level test functions, in the order go test lists them
}

// List lists the top-level tests of the packages (relative dirs like "./x",
// or patterns like "./...") with go test -list. Subtests are only known by
// running their parent. A package that does not build is an error that
// carries the compiler's output.
func (r Runner) List(ctx context.Context, dir string, pkgs []string) ([]Listed, error) {
	args := append([]string{"go", "test", "-list", "^Test"}, pkgs...)
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: args, Timeout: r.Timeout, MaxOutput: r.MaxOutput})
	if err != nil {
		return nil, fmt.Errorf("list the tests of %s: %w", strings.Join(pkgs, " "), err)
	}
	if res.TimedOut {
		return nil, fmt.Errorf("list the tests of %s: timed out", strings.Join(pkgs, " "))
	}
	var out []Listed
	var names []string
	for _, line := range strings.Split(res.Output, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && identRE.MatchString(f[0]):
			names = append(names, f[0])
		case len(f) >= 2 && (f[0] == "ok" || f[0] == "?"):
			out = append(out, Listed{ImportPath: f[1], Tests: names})
			names = nil
		}
	}
	if !res.OK() {
		return out, fmt.Errorf("list the tests of %s: %s", strings.Join(pkgs, " "), strings.TrimSpace(res.Output))
	}
	return out, nil
}
