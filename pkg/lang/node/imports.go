package node

import (
	"context"
	"path"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
)

// RegressionScope: the failing tests' files and the test files the patch
// changes first, then the test files importing the changed modules.
func (d Driver) RegressionScope(_ context.Context, dir string, patch []unidiff.File, failing []string, dependents bool) ([]string, []string, error) {
	return gaterules.FileScope(dir, patch, failing, d.Resolve, d.IsSource, isTestModule, dependents, func(changed []string, skip map[string]bool) ([]gaterules.Dependent, error) {
		mods, err := importGraph(dir)
		return importers(mods, changed, isTestModule, skip), err
	})
}

// RegressionTerms word the regression gate's evidence.
func (Driver) RegressionTerms() (none, dependents string) {
	return "no test is named by the task, changed, or imports a changed module", "test file(s) importing the changed modules"
}

// isTestModule reports a file of tests the runner runs: a test file that
// is a module, not a runner's configuration or setup.
func isTestModule(p string) bool {
	return isSourceExt(path.Ext(p)) && (Driver{}).IsTestFile(p) && !isRunnerFile(p)
}

// The regression gate's JavaScript and TypeScript rule: the test files
// that import a changed module, directly or through other modules of the
// checkout (index files and re-exports included), nearest first. Imports
// are read with tree-sitter: import … from, export … from, side-effect
// imports, require(…), import(…), and the modules jest.mock and vi.mock
// name. Relative specifiers only ("./x", "../y"; a package's name or a
// path alias is another package's business): a specifier with an
// extension is that file, or the TypeScript file its JavaScript name
// stands for (./x.js for x.ts, as TypeScript's node16 resolution writes
// it); one without is the file with the first of sourceExts that exists,
// else the directory's index file.

// module is one JavaScript or TypeScript file of the checkout.
type module struct {
	rel     string
	imports []string // the files of the checkout it imports
}

// importSkipDir are directories whose files are not the repository's
// modules: those the driver skips, and builds.
func importSkipDir(name string) bool {
	return skipDir(name) || name == "build" || name == "out"
}

// importGraph reads the checkout's modules and resolves their imports.
func importGraph(dir string) ([]module, error) {
	rels, err := gaterules.Modules(dir, importSkipDir, func(name string) bool {
		return isSourceExt(path.Ext(name)) && !strings.HasSuffix(name, ".d.ts")
	})
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, r := range rels {
		exists[r] = true
	}
	mods := make([]module, 0, len(rels))
	for _, r := range rels {
		m := module{rel: r}
		if src, err := gaterules.Read(dir, r); err == nil {
			seen := map[string]bool{}
			for _, spec := range imports(r, src) {
				if f := resolveImport(r, spec, exists); f != "" && !seen[f] {
					seen[f] = true
					m.imports = append(m.imports, f)
				}
			}
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// imports are the relative specifiers the module at rel names.
func imports(rel string, src []byte) []string {
	t, ok := parseTree(rel, src)
	if !ok {
		return nil
	}
	defer t.close()
	var out []string
	add := func(n *sitter.Node) {
		if n == nil {
			return
		}
		if s, ok := literal(n, src); ok && (strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || s == "." || s == "..") {
			out = append(out, s)
		}
	}
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "import_statement", "export_statement":
			add(n.ChildByFieldName("source"))
		case "call_expression":
			fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
			if fn == nil || args == nil || args.NamedChildCount() == 0 {
				break
			}
			switch name := callee(n, src); {
			case fn.Kind() == "import", name == "require", name == "require.resolve",
				name == "jest.mock", name == "vi.mock", name == "jest.doMock", name == "vi.doMock",
				name == "jest.requireActual", name == "vi.importActual":
				add(args.NamedChild(0))
			}
		}
		return true
	})
	return out
}

// tsFor are the TypeScript extensions a JavaScript extension in a
// specifier stands for.
var tsFor = map[string][]string{".js": {".ts", ".tsx"}, ".jsx": {".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}}

// resolveImport is the file of the checkout a relative specifier of the module
// at from names, "" when none.
func resolveImport(from, spec string, exists map[string]bool) string {
	p := path.Join(path.Dir(from), spec)
	if strings.HasPrefix(p, "../") || p == ".." {
		return "" // above the root
	}
	if ext := path.Ext(p); ext != "" {
		if exists[p] {
			return p
		}
		for _, ts := range tsFor[ext] {
			if q := strings.TrimSuffix(p, ext) + ts; exists[q] {
				return q
			}
		}
	}
	for _, ext := range sourceExts {
		if exists[p+ext] {
			return p + ext
		}
	}
	for _, ext := range sourceExts {
		if q := path.Join(p, "index"+ext); exists[q] {
			return q
		}
	}
	return ""
}

// importers are the test files (isTest) whose imports reach one of the
// changed files, with how many imports away, nearest first, then by path.
// Test files in skip are left out (their tests run anyway).
func importers(mods []module, changed []string, isTest func(string) bool, skip map[string]bool) []gaterules.Dependent {
	importers := map[string][]string{} // file -> files importing it
	for _, m := range mods {
		for _, f := range m.imports {
			if f != m.rel {
				importers[f] = append(importers[f], m.rel)
			}
		}
	}
	return gaterules.NearestImporters(importers, changed, func(f string) bool { return isTest(f) && !skip[f] })
}
