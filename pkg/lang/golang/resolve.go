package golang

import (
	"bufio"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/testrun"
	"github.com/redfix/redfix/pkg/untrusted"
)

// testDeclRE finds a test function, or an example (its output is checked
// as a test's assertions are, and go test -run selects it by name).
var testDeclRE = regexp.MustCompile(`(?m)^func (Test\w*\(\s*\w+ \*testing\.T\s*\)|Example\w*\(\s*\))`)

// Module reads the module path from dir/go.mod.
func Module(dir string) (string, error) {
	data, err := untrusted.ReadFile(dir, "go.mod", testrun.MaxSourceBytes)
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
func Resolve(dir, id string) (testrun.Target, error) {
	mod, err := Module(dir)
	if err != nil {
		return testrun.Target{}, err
	}
	pkgPath, test := split(id)
	if pkgPath == "" && (id == mod || strings.HasPrefix(id, mod+"/")) {
		rel := "./" + strings.TrimPrefix(strings.TrimPrefix(id, mod), "/")
		if id == mod {
			rel = "."
		}
		if st, err := untrusted.Lstat(dir, rel); err != nil || !st.IsDir() {
			return testrun.Target{}, fmt.Errorf("resolve %s: no package %s in module %s: %w", id, id, mod, testrun.ErrNotFound)
		}
		return testrun.Target{ID: id, ImportPath: id, Dir: rel}, nil
	}
	if pkgPath != "" {
		rel := "."
		switch {
		case pkgPath == mod:
		case strings.HasPrefix(pkgPath, mod+"/"):
			rel = "./" + strings.TrimPrefix(pkgPath, mod+"/")
		default:
			return testrun.Target{}, fmt.Errorf("resolve %s: package %s is not in module %s: %w", id, pkgPath, mod, testrun.ErrNotFound)
		}
		return testrun.Target{ID: pkgPath + "." + test, ImportPath: pkgPath, Dir: rel, Test: test}, nil
	}
	fn, _, _ := strings.Cut(test, "/")
	dirs, err := findTestFunc(dir, fn)
	if err != nil {
		return testrun.Target{}, fmt.Errorf("resolve %s: %w", id, err)
	}
	switch len(dirs) {
	case 0:
		return testrun.Target{}, fmt.Errorf("resolve %s: no package of %s defines %s: %w", id, mod, fn, testrun.ErrNotFound)
	case 1:
	default:
		return testrun.Target{}, fmt.Errorf("resolve %s: defined in %s; name the package: %w", id, strings.Join(dirs, ", "), testrun.ErrAmbiguous)
	}
	rel := dirs[0]
	imp := mod
	if rel != "." {
		imp = mod + "/" + rel
		rel = "./" + rel
	}
	return testrun.Target{ID: imp + "." + test, ImportPath: imp, Dir: rel, Test: test}, nil
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
		data, err := tree.ReadFile(untrusted.Rel(root, path), testrun.MaxSourceBytes)
		if err != nil {
			return nil // a link, a file too large to be a test's source
		}
		for _, m := range testDeclRE.FindAllSubmatch(data, -1) {
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
