package golang

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/redfix/redfix/pkg/findings"
	"github.com/redfix/redfix/pkg/untrusted"
)

// ChecksName names the checks an edit of a Go file is held to.
func (Driver) ChecksName() string { return "gofmt, go build, go vet" }

// Check runs gofmt on the Go files, and go build then go vet on the
// packages that hold them, each in the module that holds it (a module
// nested in the checkout's included; its findings are relative to its own
// root). A file outside any module, or in a directory the go command
// ignores (testdata, vendor, hidden and "_" ones), is only gofmt'd.
func (d Driver) Check(ctx context.Context, dir string, files []string) ([]findings.Finding, error) {
	byMod := map[string]*staticChecks{}
	var order []string
	seen := map[string]bool{}
	for _, f := range files {
		f = path.Clean(filepath.ToSlash(f))
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		mod, pkg, ok := moduleOf(dir, f)
		c := byMod[mod]
		if c == nil {
			c = &staticChecks{Timeout: d.CheckTimeout}
			byMod[mod] = c
			order = append(order, mod)
		}
		if fi, err := untrusted.Lstat(dir, f); err == nil && fi.Mode().IsRegular() {
			c.Gofmt = append(c.Gofmt, relTo(mod, f))
		}
		if ok && !seen[mod+" "+pkg] {
			seen[mod+" "+pkg] = true
			c.Build, c.Vet = append(c.Build, pkg), append(c.Vet, pkg)
		}
	}
	var all []findings.Finding
	for _, mod := range order {
		c := byMod[mod]
		if len(c.Gofmt)+len(c.Build) == 0 {
			continue
		}
		fs, err := runStatic(ctx, filepath.Join(dir, filepath.FromSlash(mod)), *c)
		if err != nil {
			return nil, fmt.Errorf("go checks: %w", err)
		}
		all = append(all, fs...)
	}
	return all, nil
}

// moduleOf is the module holding the Go file rel of the checkout at dir
// (its root, relative to dir: "." or a nested module's directory) and the
// file's package in it ("./x/y" or "."); ok is false outside any module or
// in a directory the go command ignores (mod is then ".").
func moduleOf(dir, rel string) (mod, pkg string, ok bool) {
	fileDir := path.Dir(rel)
	for p := fileDir; ; p = path.Dir(p) {
		if fi, err := untrusted.Lstat(dir, path.Join(p, "go.mod")); err == nil && fi.Mode().IsRegular() {
			sub := relTo(p, fileDir)
			for _, part := range strings.Split(sub, "/") {
				if part == "testdata" || part == "vendor" || part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, ".")) {
					return p, "", false
				}
			}
			if sub == "." {
				return p, ".", true
			}
			return p, "./" + sub, true
		}
		if p == "." || p == "/" {
			return ".", "", false
		}
	}
}

// relTo is the slash path p relative to the directory root ("." for the
// checkout's root).
func relTo(root, p string) string {
	if root == "." {
		return p
	}
	if r, ok := strings.CutPrefix(p, root+"/"); ok {
		return r
	}
	if p == root {
		return "."
	}
	return p
}
