package python

import (
	"context"
	"path"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
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

// RegressionScope: the failing tests' files and the test modules the patch
// changes first, then the test modules importing the changed modules.
func (d Driver) RegressionScope(_ context.Context, dir string, patch []unidiff.File, failing []string, dependents bool) ([]string, []string, error) {
	return gaterules.FileScope(dir, patch, failing, d.Resolve, d.IsSource, isTestModule, dependents, func(changed []string, skip map[string]bool) ([]gaterules.Dependent, error) {
		mods, err := importGraph(dir)
		return importers(mods, changed, skip), err
	})
}

// RegressionTerms word the regression gate's evidence.
func (Driver) RegressionTerms() (none, dependents string) {
	return "no test is named by the task, changed, or imports a changed module", "test module(s) importing the changed ones"
}

// module is one Python file of the checkout.
type module struct {
	rel     string
	dotted  string   // "shop.pricing"; a package's __init__.py is "shop"
	imports []string // dotted names it may import
}

// importSkipDir are directories whose files are not the repository's
// modules: those the driver skips, and builds (pytest does not recurse
// into them either).
func importSkipDir(name string) bool {
	return skipDir(name) || name == "build" || name == "dist"
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

// importGraph reads the checkout's Python modules and their imports.
func importGraph(dir string) ([]module, error) {
	rels, err := gaterules.Modules(dir, importSkipDir, func(name string) bool { return strings.HasSuffix(name, ".py") })
	if err != nil {
		return nil, err
	}
	mods := make([]module, 0, len(rels))
	for _, rel := range rels {
		m := module{rel: rel, dotted: dottedOf(rel)}
		if src, err := gaterules.Read(dir, rel); err == nil {
			m.imports = imports(rel, src)
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// imports are the dotted names the module at rel imports.
func imports(rel string, src []byte) []string {
	t, ok := parse(src)
	if !ok {
		return nil
	}
	defer t.close()
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
	walk(t.root(), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "import_statement":
			for i := uint(0); i < n.NamedChildCount(); i++ {
				if name := importedName(n.NamedChild(i), src); name != "" {
					add(name)
				}
			}
			return false
		case "import_from_statement":
			fromImports(n, src, pkg, add)
			return false
		}
		return true
	})
	return out
}

// importedName is the dotted name an import names, "" for another node.
func importedName(n *sitter.Node, src []byte) string {
	if n.Kind() == "aliased_import" {
		n = n.ChildByFieldName("name")
	}
	if n == nil || n.Kind() != "dotted_name" {
		return ""
	}
	return strings.Join(strings.Fields(n.Utf8Text(src)), "")
}

// fromImports adds the names a "from … import …" statement of a module of
// the package pkg imports.
func fromImports(n *sitter.Node, src []byte, pkg string, add func(string)) {
	mod := n.ChildByFieldName("module_name")
	if mod == nil {
		return
	}
	base := ""
	if mod.Kind() == "relative_import" {
		text := strings.Join(strings.Fields(mod.Utf8Text(src)), "")
		dots := len(text) - len(strings.TrimLeft(text, "."))
		parts := []string{}
		if pkg != "" {
			parts = strings.Split(pkg, ".")
		}
		if dots-1 > len(parts) {
			return // above the root
		}
		base = strings.Join(parts[:len(parts)-(dots-1)], ".")
		if rest := text[dots:]; rest != "" {
			base = strings.Trim(base+"."+rest, ".")
		}
	} else {
		base = importedName(mod, src)
	}
	if base != "" {
		add(base)
	}
	for i := uint(0); i < n.NamedChildCount(); i++ {
		c := n.NamedChild(i)
		if c.StartByte() == mod.StartByte() && c.EndByte() == mod.EndByte() {
			continue
		}
		if name := importedName(c, src); name != "" {
			add(strings.Trim(base+"."+name, "."))
		}
	}
}

// importers are the test modules whose imports reach one of the changed
// files, with how many imports away (1: the test module imports a changed
// module itself), nearest first, then by path. Test modules in skip are
// left out (their tests run anyway).
func importers(mods []module, changed []string, skip map[string]bool) []gaterules.Dependent {
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
	by := map[string][]string{} // file -> files importing it
	for _, m := range mods {
		for _, name := range m.imports {
			for _, f := range resolve(name) {
				if f != m.rel {
					by[f] = append(by[f], m.rel)
				}
			}
		}
	}
	return gaterules.NearestImporters(by, changed, func(f string) bool { return isTestModule(f) && !skip[f] })
}
