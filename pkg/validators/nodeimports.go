package validators

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/untrusted"
)

// The regression gate's JavaScript and TypeScript rule: the test files
// that import a changed module, directly or through other modules of the
// checkout (index files and re-exports included), nearest first. Imports
// are read with tree-sitter: import … from, export … from, side-effect
// imports, require(…), import(…), and the modules jest.mock and vi.mock
// name. Relative specifiers only ("./x", "../y"; a package's name or a
// path alias is another package's business): a specifier with an
// extension is that file, or the TypeScript file its JavaScript name
// stands for (./x.js for x.ts, as TypeScript's node16 resolution writes
// it); one without is the file with the first of jsExts that exists, else
// the directory's index file.

// maxJSModules bounds the files the import graph reads.
const maxJSModules = 20_000

// jsModule is one JavaScript or TypeScript file of the checkout.
type jsModule struct {
	rel     string
	imports []string // the files of the checkout it imports
}

// jsSkipDir are directories whose files are not the repository's modules:
// dependencies, builds, coverage, hidden directories.
func jsSkipDir(name string) bool {
	switch name {
	case "node_modules", "dist", "build", "coverage", "out", "bower_components", "jspm_packages":
		return true
	}
	return strings.HasPrefix(name, ".") && name != "."
}

// jsImportGraph reads the checkout's modules and resolves their imports.
func jsImportGraph(dir string) ([]jsModule, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if p != dir && jsSkipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isJSSource(d.Name()) || strings.HasSuffix(d.Name(), ".d.ts") {
			return nil
		}
		if len(rels) >= maxJSModules {
			return filepath.SkipAll
		}
		rels = append(rels, untrusted.Rel(dir, p))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the JavaScript and TypeScript modules of %s: %w", dir, err)
	}
	exists := map[string]bool{}
	for _, r := range rels {
		exists[r] = true
	}
	mods := make([]jsModule, 0, len(rels))
	for _, r := range rels {
		m := jsModule{rel: r}
		if src, err := readBeneath(dir, r, maxSourceBytes); err == nil {
			seen := map[string]bool{}
			for _, spec := range jsImports(r, src) {
				if f := jsResolve(r, spec, exists); f != "" && !seen[f] {
					seen[f] = true
					m.imports = append(m.imports, f)
				}
			}
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// jsImports are the relative specifiers the module at rel names.
func jsImports(rel string, src []byte) []string {
	tree, ok := parseJS(rel, src)
	if !ok {
		return nil
	}
	defer tree.close()
	var out []string
	add := func(n *sitter.Node) {
		if n == nil {
			return
		}
		if s, ok := jsStringText(n, src); ok && (strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || s == "." || s == "..") {
			out = append(out, s)
		}
	}
	walkJS(tree.root(), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "import_statement", "export_statement":
			add(n.ChildByFieldName("source"))
		case "call_expression":
			fn, args := n.ChildByFieldName("function"), n.ChildByFieldName("arguments")
			if fn == nil || args == nil || args.NamedChildCount() == 0 {
				break
			}
			switch name := jsCallee(n, src); {
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

// jsTSFor are the TypeScript extensions a JavaScript extension in a
// specifier stands for.
var jsTSFor = map[string][]string{".js": {".ts", ".tsx"}, ".jsx": {".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}}

// jsResolve is the file of the checkout a relative specifier of the module
// at from names, "" when none.
func jsResolve(from, spec string, exists map[string]bool) string {
	p := path.Join(path.Dir(from), spec)
	if strings.HasPrefix(p, "../") || p == ".." {
		return "" // above the root
	}
	if ext := path.Ext(p); ext != "" {
		if exists[p] {
			return p
		}
		for _, ts := range jsTSFor[ext] {
			if q := strings.TrimSuffix(p, ext) + ts; exists[q] {
				return q
			}
		}
	}
	for _, ext := range jsExts {
		if exists[p+ext] {
			return p + ext
		}
	}
	for _, ext := range jsExts {
		if q := path.Join(p, "index"+ext); exists[q] {
			return q
		}
	}
	return ""
}

// jsImporters are the test files (isTest) whose imports reach one of the
// changed files, with how many imports away, nearest first, then by path.
// Test files in skip are left out (their tests run anyway).
func jsImporters(mods []jsModule, changed []string, isTest func(string) bool, skip map[string]bool) []gaterules.Dependent {
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
