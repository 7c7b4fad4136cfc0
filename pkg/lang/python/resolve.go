package python

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Resolve turns a test as a report or a person names it into its pytest
// node id, relative to the checkout's root:
//
//   - a node id, "tests/test_x.py::TestC::test_y[p]", whose file is in the
//     checkout, or is one file's path below it (a run whose rootdir was a
//     directory of the repository);
//   - a file or a directory of tests: a package target (Test is "");
//   - the JUnit dialect pytest writes, "tests.test_x.TestC.test_y[p]"
//     (classname "tests.test_x.TestC", name "test_y[p]"): the module is
//     the file whose dotted path starts the name;
//   - a bare name, "test_y", "TestC::test_y", "test_y[p]", defined in one
//     test file of the checkout only (a function, a method of a class, or
//     a class).
//
// Errors wrap testrun.ErrNotFound or testrun.ErrAmbiguous.
func (Driver) Resolve(dir, id string) (testrun.Target, error) {
	return newResolver(dir).resolve(id)
}

// resolver resolves names in one checkout, walking it at most once.
type resolver struct {
	dir    string
	walked bool
	files  []string          // the checkout's .py files, sorted
	nodes  map[string]string // classname → file, "" when none
}

func newResolver(dir string) *resolver { return &resolver{dir: dir, nodes: map[string]string{}} }

// maxWalkFiles bounds the Python files a resolver lists.
const maxWalkFiles = 200_000

// maxSourceBytes bounds a source file read to find a test in it.
const maxSourceBytes = testrun.MaxSourceBytes

func notFound(id, format string, args ...any) error {
	return fmt.Errorf("resolve %s: %s: %w", id, fmt.Sprintf(format, args...), testrun.ErrNotFound)
}

func (r *resolver) resolve(id string) (testrun.Target, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return testrun.Target{}, notFound(id, "no name")
	}
	if file, rest, ok := strings.Cut(id, "::"); ok && strings.HasSuffix(file, ".py") {
		f, err := r.file(id, file)
		if err != nil {
			return testrun.Target{}, err
		}
		if rest == "" {
			return fileTarget(f), nil
		}
		return testrun.Target{ID: f + "::" + rest, ImportPath: f, Dir: path.Dir(f), Test: rest}, nil
	}
	if strings.HasSuffix(id, ".py") {
		f, err := r.file(id, id)
		if err != nil {
			return testrun.Target{}, err
		}
		return fileTarget(f), nil
	}
	if d, ok := cleanRel(id); ok {
		if fi, err := untrusted.Lstat(r.dir, d); err == nil && fi.IsDir() {
			return testrun.Target{ID: d, ImportPath: d, Dir: d}, nil
		}
	}
	base, params := cutParams(id)
	if strings.Contains(base, ".") && !strings.Contains(base, "::") {
		return r.dotted(id, base, params)
	}
	return r.bare(id, base, params)
}

// fileTarget is a test file as a package target.
func fileTarget(f string) testrun.Target {
	return testrun.Target{ID: f, ImportPath: f, Dir: path.Dir(f)}
}

// cleanRel is a slash path relative to the root, ok false for one that
// leaves it or that pytest would take for an option.
func cleanRel(p string) (string, bool) {
	p = path.Clean(filepath.ToSlash(p))
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "-") {
		return "", false
	}
	return p, true
}

// cutParams splits "test_y[1.5-a]" into its name and its parameters.
func cutParams(id string) (base, params string) {
	if i := strings.IndexByte(id, '['); i >= 0 {
		return id[:i], id[i:]
	}
	return id, ""
}

// isFile reports a regular file at rel, reached through no link.
func (r *resolver) isFile(rel string) bool {
	fi, err := untrusted.Lstat(r.dir, rel)
	return err == nil && fi.Mode().IsRegular()
}

// file finds the Python file that id names as rel: rel itself, or the one
// file of the checkout whose path ends with it.
func (r *resolver) file(id, rel string) (string, error) {
	p, ok := cleanRel(rel)
	if !ok {
		return "", notFound(id, "%s is not a path in the checkout", rel)
	}
	if r.isFile(p) {
		return p, nil
	}
	found, err := r.suffixed(p)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", id, err)
	}
	switch len(found) {
	case 0:
		return "", notFound(id, "no file %s in the checkout", p)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("resolve %s: %s could be %s; name the file from the checkout's root: %w", id, p, strings.Join(found, ", "), testrun.ErrAmbiguous)
}

// suffixed are the checkout's Python files whose path ends with "/"+rel.
func (r *resolver) suffixed(rel string) ([]string, error) {
	if err := r.walk(); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range r.files {
		if strings.HasSuffix(f, "/"+rel) {
			out = append(out, f)
		}
	}
	return out, nil
}

// walk lists the checkout's Python files, outside virtual environments,
// caches and hidden directories.
func (r *resolver) walk() error {
	if r.walked {
		return nil
	}
	r.walked = true
	err := filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == r.dir {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if p != r.dir && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".py") {
			return nil
		}
		if len(r.files) >= maxWalkFiles {
			return filepath.SkipAll
		}
		r.files = append(r.files, untrusted.Rel(r.dir, p))
		return nil
	})
	sort.Strings(r.files)
	if err != nil {
		return fmt.Errorf("list the Python files of %s: %w", r.dir, err)
	}
	return nil
}

// moduleFile is the file of a dotted module path ("tests.test_x"), or
// another spelling of it found below the root; "" when there is none.
func (r *resolver) moduleFile(dotted string) string {
	if f, ok := r.nodes[dotted]; ok {
		return f
	}
	rel := strings.ReplaceAll(dotted, ".", "/") + ".py"
	f := ""
	if r.isFile(rel) {
		f = rel
	} else if found, err := r.suffixed(rel); err == nil && len(found) == 1 {
		f = found[0]
	}
	r.nodes[dotted] = f
	return f
}

// node turns a JUnit classname and name into a node id's file and test:
// the file is the longest start of the classname that is a module of the
// checkout, the rest its classes; or, for a doctest, the rest is the
// doctest's dotted name (see doctest). ok is false when no start is.
func (r *resolver) node(classname, name string) (file, test string, ok bool) {
	comps := strings.Split(classname, ".")
	for k := len(comps); k >= 1; k-- {
		if f := r.moduleFile(strings.Join(comps[:k], ".")); f != "" {
			rest := append(append([]string(nil), comps[k:]...), name)
			if len(rest) > 1 && r.doctest(f, comps[:k], rest) {
				return f, strings.Join(rest, "."), true
			}
			return f, strings.Join(rest, "::"), true
		}
	}
	return "", "", false
}

// dotted resolves the JUnit dialect: "tests.test_x.TestC.test_y" and its
// parameters.
func (r *resolver) dotted(id, base, params string) (testrun.Target, error) {
	comps := strings.Split(base, ".")
	for _, c := range comps {
		if c == "" {
			return testrun.Target{}, notFound(id, "not a test's name")
		}
	}
	// The whole name a module: a collection error's "test", its file.
	if params == "" {
		if f := r.moduleFile(base); f != "" {
			return fileTarget(f), nil
		}
	}
	if len(comps) < 2 {
		return testrun.Target{}, notFound(id, "not a test's name")
	}
	file, test, ok := r.node(strings.Join(comps[:len(comps)-1], "."), comps[len(comps)-1]+params)
	if !ok {
		return testrun.Target{}, notFound(id, "no module of the checkout starts %s", base)
	}
	return testrun.Target{ID: file + "::" + test, ImportPath: file, Dir: path.Dir(file), Test: test}, nil
}

// fromJoined is the node id of a test a JUnit report names by its
// classname and name joined with a dot, as report.Result's Passed and
// Skipped do; the id itself when no module of the checkout starts it.
func (r *resolver) fromJoined(id string) string {
	base, params := cutParams(id)
	i := strings.LastIndexByte(base, '.')
	if i < 0 {
		return id
	}
	if file, test, ok := r.node(base[:i], base[i+1:]+params); ok {
		return file + "::" + test
	}
	return id
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// maxAmbiguous bounds the places an ambiguous name's error lists.
const maxAmbiguous = 5

// bare finds a name ("test_y", "TestC::test_y") among the definitions of
// the checkout's test files.
func (r *resolver) bare(id, base, params string) (testrun.Target, error) {
	names := strings.Split(base, "::")
	for _, n := range names {
		if !identRE.MatchString(n) {
			return testrun.Target{}, notFound(id, "not a test's name")
		}
	}
	if err := r.walk(); err != nil {
		return testrun.Target{}, fmt.Errorf("resolve %s: %w", id, err)
	}
	last := []byte(names[len(names)-1])
	var found []string
	for _, f := range r.files {
		if !(Driver{}).IsTestFile(f) {
			continue
		}
		src, err := untrusted.ReadFile(r.dir, f, maxSourceBytes)
		if err != nil || !bytes.Contains(src, last) {
			continue
		}
		for _, def := range parseDefs(src) {
			chain := append(append([]string(nil), def.classes...), def.name)
			if len(chain) >= len(names) && slices.Equal(chain[len(chain)-len(names):], names) {
				found = append(found, f+"::"+strings.Join(chain, "::"))
			}
		}
	}
	switch len(found) {
	case 0:
		return testrun.Target{}, notFound(id, "no test file of the checkout defines %s", base)
	case 1:
	default:
		shown := found
		if len(shown) > maxAmbiguous {
			shown = append(shown[:maxAmbiguous:maxAmbiguous], fmt.Sprintf("and %d more", len(found)-maxAmbiguous))
		}
		return testrun.Target{}, fmt.Errorf("resolve %s: defined as %s; name it by its node id: %w", id, strings.Join(shown, ", "), testrun.ErrAmbiguous)
	}
	file, test, _ := strings.Cut(found[0], "::")
	test += params
	return testrun.Target{ID: file + "::" + test, ImportPath: file, Dir: path.Dir(file), Test: test}, nil
}
