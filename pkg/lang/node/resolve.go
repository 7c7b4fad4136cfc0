package node

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Resolve turns a test as a report or a person names it into its
// canonical target:
//
//   - FILE::NAME, the canonical id (vitest's JUnit names a test so: its
//     classname the file, its name the describe blocks and title joined by
//     " > "), whose file is in the checkout or is one file's path below it;
//   - a test file, or a directory of them: a package target (Test "");
//     so is FILE::FILE, vitest's JUnit name of a file that did not load;
//   - a name without its file, declared with literal names in one test
//     file of the checkout only: "price > applies the discount", the same
//     joined by spaces as jest-junit's default dialect, mocha and jest
//     name it ("cart totals the items"), either after a JUnit suite or
//     classname and a dot ("cart.cart totals the items"), or a bare title
//     ("applies the discount").
//
// Errors wrap testrun.ErrNotFound or testrun.ErrAmbiguous.
func (Driver) Resolve(dir, id string) (testrun.Target, error) {
	return newResolver(dir).resolve(id)
}

// resolver resolves names in one checkout, walking it at most once.
type resolver struct {
	dir    string
	walked bool
	files  []string // the checkout's test files, sorted
	tests  []fileTest
}

type fileTest struct {
	file string
	t    declared
}

func newResolver(dir string) *resolver { return &resolver{dir: dir} }

// maxWalkFiles bounds the files a resolver lists; maxSourceBytes a test
// file read to find its tests.
const (
	maxWalkFiles   = 200_000
	maxSourceBytes = testrun.MaxSourceBytes
)

func notFound(id, format string, args ...any) error {
	return fmt.Errorf("resolve %s: %s: %w", id, fmt.Sprintf(format, args...), testrun.ErrNotFound)
}

func (r *resolver) resolve(id string) (testrun.Target, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return testrun.Target{}, notFound(id, "no name")
	}
	if file, rest, ok := strings.Cut(id, "::"); ok && isSourceExt(path.Ext(file)) {
		f, err := r.file(id, file)
		if err != nil {
			return testrun.Target{}, err
		}
		if rest == "" || rest == file || rest == f {
			// vitest's JUnit names a file that did not load by the file
			// twice.
			return fileTarget(f), nil
		}
		return testTarget(f, rest), nil
	}
	if isSourceExt(path.Ext(id)) && !strings.Contains(id, " ") {
		f, err := r.file(id, id)
		if err != nil {
			return testrun.Target{}, err
		}
		return fileTarget(f), nil
	}
	if d, ok := cleanRel(id); ok && !strings.Contains(id, " ") {
		if fi, err := untrusted.Lstat(r.dir, d); err == nil && fi.IsDir() {
			return testrun.Target{ID: d, ImportPath: d, Dir: d}, nil
		}
	}
	return r.byName(id)
}

func fileTarget(f string) testrun.Target {
	return testrun.Target{ID: f, ImportPath: f, Dir: path.Dir(f)}
}

func testTarget(f, name string) testrun.Target {
	return testrun.Target{ID: f + "::" + name, ImportPath: f, Dir: path.Dir(f), Test: name}
}

// cleanRel is a slash path relative to the root, ok false for one that
// leaves it or that a runner would take for an option.
func cleanRel(p string) (string, bool) {
	p = path.Clean(filepath.ToSlash(p))
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "-") {
		return "", false
	}
	return p, true
}

// file finds the file that id names as rel: rel itself, or the one test
// file of the checkout whose path ends with it.
func (r *resolver) file(id, rel string) (string, error) {
	p, ok := cleanRel(rel)
	if !ok {
		return "", notFound(id, "%s is not a path in the checkout", rel)
	}
	if fi, err := untrusted.Lstat(r.dir, p); err == nil && fi.Mode().IsRegular() {
		return p, nil
	}
	if err := r.walk(); err != nil {
		return "", fmt.Errorf("resolve %s: %w", id, err)
	}
	var found []string
	for _, f := range r.files {
		if strings.HasSuffix(f, "/"+p) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return "", notFound(id, "no file %s in the checkout", p)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("resolve %s: %s could be %s; name the file from the checkout's root: %w", id, p, strings.Join(found, ", "), testrun.ErrAmbiguous)
}

// walk lists the checkout's test files, outside node_modules, builds and
// hidden directories.
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
		rel := untrusted.Rel(r.dir, p)
		if !d.Type().IsRegular() || !isSourceExt(path.Ext(rel)) || !(Driver{}).IsTestFile(rel) || isRunnerFile(rel) {
			return nil
		}
		if len(r.files) >= maxWalkFiles {
			return filepath.SkipAll
		}
		r.files = append(r.files, rel)
		return nil
	})
	sort.Strings(r.files)
	if err != nil {
		return fmt.Errorf("list the test files of %s: %w", r.dir, err)
	}
	return nil
}

// declaredAll are the tests every test file declares with literal names.
func (r *resolver) declaredAll() ([]fileTest, error) {
	if r.tests != nil || r.walked && len(r.files) == 0 {
		return r.tests, nil
	}
	if err := r.walk(); err != nil {
		return nil, err
	}
	r.tests = []fileTest{}
	for _, f := range r.files {
		src, err := untrusted.ReadFile(r.dir, f, maxSourceBytes)
		if err != nil {
			continue
		}
		for _, t := range declaredTests(f, src) {
			r.tests = append(r.tests, fileTest{f, t})
		}
	}
	return r.tests, nil
}

// maxAmbiguous bounds the places an ambiguous name's error lists.
const maxAmbiguous = 5

// byName finds a test by its name without its file (see Resolve): the
// first spelling that matches a declared test decides.
func (r *resolver) byName(id string) (testrun.Target, error) {
	tests, err := r.declaredAll()
	if err != nil {
		return testrun.Target{}, fmt.Errorf("resolve %s: %w", id, err)
	}
	// The name as it is, then what follows each dot (a JUnit suite's or
	// classname's end).
	names := []string{id}
	for i := 0; i < len(id); i++ {
		if id[i] == '.' && i+1 < len(id) {
			names = append(names, id[i+1:])
		}
	}
	spellings := []func(declared, string) bool{
		func(t declared, n string) bool { return t.name() == n },
		func(t declared, n string) bool { return strings.Join(t.names, " ") == n },
		func(t declared, n string) bool { return t.names[len(t.names)-1] == n },
	}
	for _, matches := range spellings {
		for _, n := range names {
			var found []string
			seen := map[string]bool{}
			for _, ft := range tests {
				if matches(ft.t, n) {
					key := ft.file + "::" + ft.t.name()
					if !seen[key] {
						seen[key] = true
						found = append(found, key)
					}
				}
			}
			switch len(found) {
			case 0:
				continue
			case 1:
				file, name, _ := strings.Cut(found[0], "::")
				return testTarget(file, name), nil
			}
			shown := found
			if len(shown) > maxAmbiguous {
				shown = append(shown[:maxAmbiguous:maxAmbiguous], fmt.Sprintf("and %d more", len(found)-maxAmbiguous))
			}
			return testrun.Target{}, fmt.Errorf("resolve %s: declared as %s; name it by FILE::NAME: %w", id, strings.Join(shown, ", "), testrun.ErrAmbiguous)
		}
	}
	return testrun.Target{}, notFound(id, "no test file of the checkout declares it")
}
