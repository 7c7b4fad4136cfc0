package validators

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/untrusted"
)

// The regression gate's Python rule: the test modules that import a
// changed module, directly or through other modules of the checkout,
// nearest first. Imports are read with tree-sitter from every import
// statement of a module (those in functions and try blocks too): "import
// a.b", "from a.b import c" (a, a.b and a.b.c: c may be a module), "from .
// import c" and "from ..x import y" relative to the importing module's
// package. A name is the module whose dotted path from the root is that
// name, or, when none is, those whose dotted path ends with it (a src/
// layout, a tests directory on sys.path).

// maxPyModules bounds the Python files the import graph reads.
const maxPyModules = 20_000

// pyModule is one Python file of the checkout.
type pyModule struct {
	rel     string
	dotted  string   // "shop.pricing"; a package's __init__.py is "shop"
	imports []string // dotted names it may import
}

// isTestModule reports a file pytest collects by its default name rule.
func isTestModule(rel string) bool {
	base := path.Base(rel)
	return strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py"))
}

// pySkipDir are directories whose files are not the repository's modules.
func pySkipDir(name string) bool {
	switch name {
	case "venv", "__pycache__", "node_modules", "site-packages", "build", "dist":
		return true
	}
	return strings.HasPrefix(name, ".") && name != "."
}

// dottedOf is the module name of a file from the root.
func dottedOf(rel string) string {
	rel = strings.TrimSuffix(rel, ".py")
	rel = strings.TrimSuffix(rel, "/__init__")
	if rel == "__init__" {
		return ""
	}
	return strings.ReplaceAll(rel, "/", ".")
}

// pyImportGraph reads the checkout's Python modules and their imports.
func pyImportGraph(dir string) ([]pyModule, error) {
	var mods []pyModule
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if p != dir && pySkipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".py") {
			return nil
		}
		if len(mods) >= maxPyModules {
			return filepath.SkipAll
		}
		rel := untrusted.Rel(dir, p)
		m := pyModule{rel: rel, dotted: dottedOf(rel)}
		if src, err := readBeneath(dir, rel, maxSourceBytes); err == nil {
			m.imports = pyImports(rel, src)
		}
		mods = append(mods, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the Python modules of %s: %w", dir, err)
	}
	return mods, nil
}

// pyImports are the dotted names the module at rel imports.
func pyImports(rel string, src []byte) []string {
	tree, ok := parsePy(src)
	if !ok {
		return nil
	}
	defer tree.close()
	pkg := dottedOf(rel)
	if path.Base(rel) != "__init__.py" {
		if i := strings.LastIndexByte(pkg, '.'); i >= 0 {
			pkg = pkg[:i]
		} else {
			pkg = ""
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		// A name imports its packages too: their __init__.py runs.
		parts := strings.Split(name, ".")
		for i := 1; i <= len(parts); i++ {
			n := strings.Join(parts[:i], ".")
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	nameOf := func(n *sitter.Node) string {
		if n.Kind() == "aliased_import" {
			n = n.ChildByFieldName("name")
		}
		if n == nil || n.Kind() != "dotted_name" {
			return ""
		}
		return strings.Join(strings.Fields(n.Utf8Text(tree.src)), "")
	}
	walkPy(tree.root(), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "import_statement":
			for i := uint(0); i < n.NamedChildCount(); i++ {
				if name := nameOf(n.NamedChild(i)); name != "" {
					add(name)
				}
			}
			return false
		case "import_from_statement":
			mod := n.ChildByFieldName("module_name")
			if mod == nil {
				return false
			}
			base := ""
			if mod.Kind() == "relative_import" {
				text := strings.Join(strings.Fields(mod.Utf8Text(tree.src)), "")
				dots := len(text) - len(strings.TrimLeft(text, "."))
				parts := []string{}
				if pkg != "" {
					parts = strings.Split(pkg, ".")
				}
				if dots-1 > len(parts) {
					return false // above the root
				}
				base = strings.Join(parts[:len(parts)-(dots-1)], ".")
				if rest := text[dots:]; rest != "" {
					base = strings.Trim(base+"."+rest, ".")
				}
			} else {
				base = nameOf(mod)
			}
			if base != "" {
				add(base)
			}
			for i := uint(0); i < n.NamedChildCount(); i++ {
				c := n.NamedChild(i)
				if c.StartByte() == mod.StartByte() && c.EndByte() == mod.EndByte() {
					continue
				}
				if name := nameOf(c); name != "" {
					add(strings.Trim(base+"."+name, "."))
				}
			}
			return false
		}
		return true
	})
	return out
}

// pyImporters are the test modules whose imports reach one of the changed
// files, with how many imports away (1: the test module imports a changed
// module itself), nearest first, then by path. Test modules in skip are
// left out (their tests run anyway).
func pyImporters(mods []pyModule, changed []string, skip map[string]bool) []Dependent {
	exact := map[string][]string{}
	suffix := map[string][]string{} // "pricing", "shop.pricing" of "src.shop.pricing"
	for _, m := range mods {
		if m.dotted == "" {
			continue
		}
		exact[m.dotted] = append(exact[m.dotted], m.rel)
		for i := strings.IndexByte(m.dotted, '.'); i >= 0; {
			s := m.dotted[i+1:]
			suffix[s] = append(suffix[s], m.rel)
			j := strings.IndexByte(s, '.')
			if j < 0 {
				break
			}
			i += j + 1
		}
	}
	resolve := func(name string) []string {
		if fs := exact[name]; len(fs) > 0 {
			return fs
		}
		return suffix[name]
	}
	importers := map[string][]string{} // file -> files importing it
	for _, m := range mods {
		for _, name := range m.imports {
			for _, f := range resolve(name) {
				if f != m.rel {
					importers[f] = append(importers[f], m.rel)
				}
			}
		}
	}
	return nearestImporters(importers, changed, func(f string) bool { return isTestModule(f) && !skip[f] })
}

// nearestImporters walks the import graph (importers: a file -> the files
// importing it) from the changed files outward: the files keep holds,
// with how many imports away and which changed file reached them, nearest
// first, then by path.
func nearestImporters(importers map[string][]string, changed []string, keep func(string) bool) []Dependent {
	type reach struct {
		via  string
		hops int
	}
	seen := map[string]reach{}
	var frontier []string
	for _, f := range changed {
		seen[f] = reach{f, 0}
		frontier = append(frontier, f)
	}
	var out []Dependent
	for hops := 1; len(frontier) > 0; hops++ {
		var next []string
		for _, f := range frontier {
			for _, imp := range importers[f] {
				if _, ok := seen[imp]; ok {
					continue
				}
				seen[imp] = reach{seen[f].via, hops}
				next = append(next, imp)
			}
		}
		sort.Strings(next)
		for _, f := range next {
			if keep(f) {
				out = append(out, Dependent{Dir: f, Via: seen[f].via, Hops: hops})
			}
		}
		frontier = next
	}
	return out
}
