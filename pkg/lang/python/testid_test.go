package python

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pytestName is one test as pytest names it: its node id, and the
// classname and name of its JUnit test case.
type pytestName struct {
	nodeID, classname, name string
}

// junitOf is what pytest's JUnit report names the node id by (pytest's
// mangling: the file's path dotted without ".py", the node's names, the
// parameters put back on the last).
func junitOf(nodeID string) pytestName {
	path, params, hasParams := strings.Cut(nodeID, "[")
	names := strings.Split(path, "::")
	names[0] = strings.TrimSuffix(strings.ReplaceAll(names[0], "/", "."), ".py")
	if hasParams {
		names[len(names)-1] += "[" + params
	}
	return pytestName{nodeID: nodeID, classname: strings.Join(names[:len(names)-1], "."), name: names[len(names)-1]}
}

// genModule writes nothing: it makes a module of tests and doctests with
// random names, its source, and the names pytest gives its tests.
func genModule(rng *rand.Rand) (file, src string, tests []pytestName) {
	dirs := [][]string{{"tests"}, {"src", "pkg"}, {"pkg", "sub"}, {}, {"tests", "unit"}}
	dir := dirs[rng.IntN(len(dirs))]
	mods := []string{"test_calc", "test_x", "mod", "calc", "__init__"}
	mod := mods[rng.IntN(len(mods))]
	comps := append(append([]string(nil), dir...), mod)
	file = strings.Join(comps, "/") + ".py"
	module := comps
	if mod == "__init__" {
		module = comps[:len(comps)-1]
		if len(module) == 0 {
			module, file = []string{"m"}, "m.py"
		}
	}
	// The module's import name: an ending of its dotted path.
	importName := strings.Join(module[rng.IntN(len(module)):], ".")
	var b strings.Builder
	b.WriteString("import pytest\n\n")
	params := []string{"a", "1.5", "::", ".", "-", "x y", ">", "[w]", "b::c", " > ", "x.y::z[w]"}
	param := func() string {
		var p strings.Builder
		for range 1 + rng.IntN(3) {
			p.WriteString(params[rng.IntN(len(params))])
		}
		return "[" + p.String() + "]"
	}
	for k := range 1 + rng.IntN(4) {
		switch rng.IntN(5) {
		case 0: // a function, maybe parametrized
			name := fmt.Sprintf("test_f%d", k)
			fmt.Fprintf(&b, "def %s(p=None):\n    pass\n\n", name)
			id := file + "::" + name
			if rng.IntN(2) == 0 {
				id += param()
			}
			tests = append(tests, junitOf(id))
		case 1: // a method of classes nested in classes
			depth := 1 + rng.IntN(3)
			var chain []string
			for d := range depth {
				indent := strings.Repeat("    ", d)
				cls := fmt.Sprintf("TestC%d_%d", k, d)
				fmt.Fprintf(&b, "%sclass %s:\n", indent, cls)
				chain = append(chain, cls)
			}
			name := fmt.Sprintf("test_m%d", k)
			fmt.Fprintf(&b, "%sdef %s(self):\n%s    pass\n\n", strings.Repeat("    ", depth), name, strings.Repeat("    ", depth))
			id := file + "::" + strings.Join(append(chain, name), "::")
			if rng.IntN(3) == 0 {
				id += param()
			}
			tests = append(tests, junitOf(id))
		case 2: // a function named as its module
			fmt.Fprintf(&b, "def %s():\n    pass\n\n", mod)
			tests = append(tests, junitOf(file+"::"+mod))
		case 3: // a doctest of a method or a function
			cls := fmt.Sprintf("Thing%d", k)
			fmt.Fprintf(&b, "class %s:\n    def method(self):\n        '''\n        >>> 1\n        1\n        '''\n\n", cls)
			fmt.Fprintf(&b, "def helper%d():\n    '''\n    >>> 1\n    1\n    '''\n\n", k)
			if rng.IntN(2) == 0 {
				tests = append(tests, junitOf(file+"::"+importName+"."+cls+".method"))
			} else {
				tests = append(tests, junitOf(file+"::"+importName+fmt.Sprintf(".helper%d", k)))
			}
		default: // the module's own doctest
			tests = append(tests, junitOf(file+"::"+importName))
		}
	}
	return file, b.String(), dedupNames(tests)
}

func dedupNames(ts []pytestName) []pytestName {
	var out []pytestName
	for _, t := range ts {
		if !slices.ContainsFunc(out, func(o pytestName) bool { return o.nodeID == t.nodeID }) {
			out = append(out, t)
		}
	}
	return out
}

// Whatever names a test (its node id, its JUnit test case, the two joined
// with a dot as reports' passed tests and CI's ids do), the driver names
// it by its node id, and says it is declared: over generated modules of
// functions, parametrized cases whose parameters hold "::", "." and "[",
// classes nested in classes, functions named as their module and doctests
// (of a method, a function, the module itself) under each import name.
func TestTestIDsRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 38))
	for i := range 200 {
		file, src, tests := genModule(rng)
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{file: src, "conftest.py": ""})
		for _, tc := range tests {
			joined := tc.classname + "." + tc.name
			for _, as := range []string{tc.nodeID, joined} {
				got, err := Driver{}.Resolve(dir, as)
				if err != nil || got.ID != tc.nodeID {
					t.Fatalf("case %d: Resolve(%q) = %q, %v; want %q\n%s", i, as, got.ID, err, tc.nodeID, src)
				}
			}
			r := newResolver(dir)
			if f, test, ok := r.node(tc.classname, tc.name); !ok || f+"::"+test != tc.nodeID {
				t.Fatalf("case %d: the JUnit case (%q, %q) is %q, want %q\n%s", i, tc.classname, tc.name, f+"::"+test, tc.nodeID, src)
			}
			if got := r.joined(joined); got != tc.nodeID {
				t.Fatalf("case %d: the passed test %q is %q, want %q\n%s", i, joined, got, tc.nodeID, src)
			}
			if !(Driver{}).DeclaresTest(dir, tc.nodeID) {
				t.Fatalf("case %d: %s is not declared\n%s", i, tc.nodeID, src)
			}
		}
	}
}

// What is not declared is not: bisection's "did the test exist before"
// asks this of a commit it could not run.
func TestDeclaresTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"src/pkg/__init__.py": "",
		"src/pkg/mod.py":      "class Box:\n    def peek(self):\n        '''\n        >>> 1\n        1\n        '''\n",
		"tests/test_x.py":     "class TestA:\n    class TestB:\n        def test_c(self):\n            pass\n\ndef test_p(p):\n    pass\n",
	})
	for id, want := range map[string]bool{
		"tests/test_x.py::TestA::TestB::test_c": true,
		"tests/test_x.py::test_p[a::b.c]":       true,
		"tests/test_x.py":                       true,
		"src/pkg/mod.py::pkg.mod.Box.peek":      true,
		"src/pkg/mod.py::pkg.mod":               true,
		"tests/test_x.py::TestA::test_c":        false,
		"tests/test_x.py::test_q":               false,
		"src/pkg/mod.py::pkg.mod.Box.push":      false,
		"tests/test_y.py::test_p":               false,
	} {
		if got := (Driver{}).DeclaresTest(dir, id); got != want {
			t.Errorf("DeclaresTest(%s) = %v, want %v", id, got, want)
		}
	}
}

// idsRepo has the tests whose names a dotted reading gets wrong: doctests
// of a method, a function and a module (collected with --doctest-modules,
// as pytest's configuration says), parametrized cases whose parameters
// hold "::", "." and "[", a class nested in a class, a function named as
// its module.
var idsRepo = map[string]string{
	"pytest.ini":          "[pytest]\naddopts = --doctest-modules\ntestpaths = src tests\n",
	"src/pkg/__init__.py": "",
	"src/pkg/mod.py": `"""The module.

>>> 1 + 1
2
"""


class Box:
    def peek(self, default=None):
        """
        >>> Box().peek()
        'empty'
        """
        return default


def twice(x):
    """
    >>> twice(2)
    4
    """
    return x * 2
`,
	"tests/test_ids.py": `import pytest


class TestOuter:
    class TestInner:
        def test_deep(self):
            pass


@pytest.mark.parametrize("p", ["a::b", "1.5", "x.y::z[w]", "q > r"])
def test_param(p):
    assert p != "1.5"


def test_ids():
    pass
`,
}

// pytest's own names for idsRepo's tests, as it collects them.
func collected(t *testing.T, py, dir string) []string {
	t.Helper()
	cmd := exec.Command(py, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", "--rootdir="+dir)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pytest --collect-only: %v\n%s", err, out)
	}
	var ids []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "::") {
			ids = append(ids, strings.TrimSpace(l))
		}
	}
	return ids
}

// A run through pytest names every test as pytest's collection does: the
// doctest that came back as "src/pkg/mod.py::pkg::mod::Box::peek" (and
// was "did not run") comes back under its own id, failing, and so does
// each other test, asked by its id or by its JUnit name.
func TestRunNamesTestsAsPytestDoes(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	dir := repo(t, idsRepo)
	py, err := d.interpreter()
	if err != nil {
		t.Fatal(err)
	}
	want := collected(t, py, dir)
	for _, id := range []string{"src/pkg/mod.py::pkg.mod.Box.peek", "src/pkg/mod.py::pkg.mod", "tests/test_ids.py::test_param[x.y::z[w]]", "tests/test_ids.py::TestOuter::TestInner::test_deep"} {
		if !slices.Contains(want, id) {
			t.Fatalf("pytest collects %q, not %s", want, id)
		}
	}
	o := mustRun(t, ctx, d, dir, 1, want...)
	if len(o.Missing) != 0 || len(o.Build) != 0 || len(o.Others) != 0 {
		t.Fatalf("Missing %q, Build %+v, Others %+v\n%s", o.Missing, o.Build, o.Others, o.Output)
	}
	var got []string
	for id := range o.Runs {
		got = append(got, id)
	}
	if slices.Sort(got); !slices.Equal(got, sorted(want)) {
		t.Errorf("the run names\n%q\npytest collects\n%q", got, sorted(want))
	}
	if f := sorted(ids(o.Failed)); !slices.Equal(f, []string{"src/pkg/mod.py::pkg.mod.Box.peek", "tests/test_ids.py::test_param[1.5]"}) {
		t.Errorf("Failed = %q", f)
	}
	// By their JUnit names, joined as CI's reports name them.
	var joined []string
	for _, id := range want {
		j := junitOf(id)
		joined = append(joined, j.classname+"."+j.name)
	}
	o = mustRun(t, ctx, d, dir, 1, joined...)
	if len(o.Missing) != 0 || len(o.Passed)+len(o.Failed) != len(want) {
		t.Errorf("by JUnit names: Missing %q, Passed %q, Failed %q", o.Missing, o.Passed, ids(o.Failed))
	}
}
