package golang

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/sandbox"
	"github.com/redfix/redfix/pkg/unidiff"
)

// RegressionScope: the changed packages and the failing tests' first,
// then the packages whose tests depend on the changed ones (go list's
// imports, in the module), nearest first.
func (Driver) RegressionScope(ctx context.Context, dir string, patch []unidiff.File, failing []string, deps bool) ([]string, []string, error) {
	changed := changedPackages(dir, patch)
	pkgs := map[string]bool{}
	for _, p := range changed {
		pkgs[p] = true
	}
	for _, id := range failing {
		if t, err := Resolve(dir, id); err == nil {
			pkgs[t.Dir] = true
		}
	}
	if len(pkgs) == 0 || len(changed) == 0 || !deps {
		return gaterules.SortedKeys(pkgs), nil, nil
	}
	ds, err := dependents(ctx, dir, changed)
	if err != nil {
		return gaterules.SortedKeys(pkgs), nil, fmt.Errorf("dependents of the changed packages: %w", err)
	}
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Dir)
	}
	return gaterules.SortedKeys(pkgs), out, nil
}

// RegressionTerms word the regression gate's evidence.
func (Driver) RegressionTerms() (none, deps string) {
	return "no Go package is changed or tested by the task", "dependent package(s)"
}

// PackageOfFailure finds which of the batch's package directories a
// failing id ("import/path.TestX", "the build of import/path") belongs
// to; all of them when it cannot tell.
func (Driver) PackageOfFailure(dir, id string, batch []string) []string {
	mod, err := Module(dir)
	if err != nil {
		return batch
	}
	name := strings.TrimPrefix(id, "the build of ")
	best := ""
	for _, p := range batch {
		imp := mod
		if p != "." {
			imp = mod + "/" + strings.TrimPrefix(p, "./")
		}
		if (strings.HasPrefix(name, imp+".") || name == imp || strings.HasPrefix(name, imp+" ")) && len(p) > len(best) {
			best = p
		}
	}
	if best != "" {
		return []string{best}
	}
	return batch
}

// HasPackage reports a package ("./x") with Go files in the checkout at
// dir.
func (Driver) HasPackage(dir, pkg string) bool { return hasGoFiles(dir, strings.TrimPrefix(pkg, "./")) }

// pkgInfo is one package of the module, as go list describes it.
type pkgInfo struct {
	importPath string
	rel        string // "./x/y" or "."
	imports    []string
	testDeps   []string // what its tests import on top of imports
	hasTests   bool
}

// dependent is a package whose tests depend on a changed package.
type dependent struct {
	Dir string // "./x/y"
	// Via is the changed package it reaches, and Hops how many imports away
	// (1: it imports the changed package itself, or its tests do).
	Via  string
	Hops int
}

// dependents lists the packages of the module at dir whose tests depend,
// directly or through other packages of the module, on one of the changed
// packages (relative patterns "./x"), nearest first. The changed packages
// themselves are not in the list.
func dependents(ctx context.Context, dir string, changed []string) ([]dependent, error) {
	pkgs, err := listPackages(ctx, dir)
	if err != nil {
		return nil, err
	}
	byPath := map[string]*pkgInfo{}
	byRel := map[string]*pkgInfo{}
	for i := range pkgs {
		byPath[pkgs[i].importPath] = &pkgs[i]
		byRel[pkgs[i].rel] = &pkgs[i]
	}
	// Reverse edges inside the module: who imports whom.
	importers := map[string][]string{}
	testImporters := map[string][]string{}
	for _, p := range pkgs {
		for _, imp := range p.imports {
			if _, ok := byPath[imp]; ok {
				importers[imp] = append(importers[imp], p.importPath)
			}
		}
		for _, imp := range p.testDeps {
			if _, ok := byPath[imp]; ok {
				testImporters[imp] = append(testImporters[imp], p.importPath)
			}
		}
	}
	type reach struct {
		hops int
		via  string
	}
	// Breadth first from the changed packages over import edges: every
	// package reached has code that depends on a change.
	code := map[string]reach{}
	var queue []string
	for _, rel := range changed {
		if p, ok := byRel[rel]; ok {
			code[p.importPath] = reach{0, p.rel}
			queue = append(queue, p.importPath)
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, q := range importers[cur] {
			if _, seen := code[q]; !seen {
				code[q] = reach{code[cur].hops + 1, code[cur].via}
				queue = append(queue, q)
			}
		}
	}
	// Tests depend on a change when their package does, or when they
	// import a package that does.
	tests := map[string]reach{}
	for path, r := range code {
		if r.hops > 0 {
			tests[path] = r
		}
	}
	for path, r := range code {
		for _, q := range testImporters[path] {
			if old, ok := tests[q]; !ok || r.hops+1 < old.hops {
				tests[q] = reach{r.hops + 1, r.via}
			}
		}
	}
	for path, r := range code {
		if r.hops == 0 {
			delete(tests, path) // a changed package: run with the others
		}
	}
	var out []dependent
	for path, r := range tests {
		p := byPath[path]
		if !p.hasTests {
			continue
		}
		out = append(out, dependent{Dir: p.rel, Via: r.via, Hops: r.hops})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Hops != out[j].Hops {
			return out[i].Hops < out[j].Hops
		}
		return out[i].Dir < out[j].Dir
	})
	return out, nil
}

// listPackages runs go list over the module at dir.
func listPackages(ctx context.Context, dir string) ([]pkgInfo, error) {
	const format = `{{.ImportPath}}|{{.Dir}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}|{{len .TestGoFiles}} {{len .XTestGoFiles}}`
	res, err := sandbox.Run(ctx, sandbox.Cmd{Dir: dir, Args: []string{"go", "list", "-e", "-f", format, "./..."}})
	if err != nil {
		return nil, fmt.Errorf("go list ./... in %s: %w", dir, err)
	}
	if !res.OK() {
		return nil, fmt.Errorf("go list ./... in %s: exit %d: %s", dir, res.ExitCode, gaterules.OneLine(res.Output, 300))
	}
	root := dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		root = real
	}
	var pkgs []pkgInfo
	for _, line := range strings.Split(res.Output, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 5 {
			continue // a warning of the go command
		}
		pdir := f[1]
		if real, err := filepath.EvalSymlinks(pdir); err == nil {
			pdir = real
		}
		rel, err := filepath.Rel(root, pdir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		p := pkgInfo{importPath: f[0], rel: pattern(filepath.ToSlash(rel)), imports: strings.Fields(f[2]), testDeps: strings.Fields(f[3])}
		p.hasTests = f[4] != "0 0"
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}
