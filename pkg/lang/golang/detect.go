package golang

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/redfix/redfix/pkg/lang/gaterules"
	"github.com/redfix/redfix/pkg/unidiff"
	"github.com/redfix/redfix/pkg/untrusted"
)

// Code that behaves differently under go test makes the tests pass without
// mending what users run. The gate looks for it in the lines a patch adds to
// non-test Go files (a _test.go file or test data may well look at its own
// stack or binary): one-line forms by their text, and the forms spread over
// several lines by reading the file after the patch.

// goLineDetections are the forms of test detection one line shows, and
// how the evidence says each (as detections does).
var goLineDetections = []gaterules.Detection{
	{RE: regexp.MustCompile(`testing\.Testing\(\)`), How: howTesting},
	{RE: regexp.MustCompile(`flag\.Lookup\("test\.|"-test\.(v|run)`), How: howFlagName},
	{RE: regexp.MustCompile(`os\.Args\[0\].*\.test`), How: howExe},
}

// How the evidence names the detections that a line shows on its own too.
const (
	howTesting  = "by calling testing.Testing"
	howFlagName = "by a go test flag's name"
	howExe      = "by its executable's name (os.Executable or os.Args, and a test binary's name)"
)

// maxDetectBytes bounds each Go file read back to look for test detection.
const maxDetectBytes = 4 << 20

// srcLine is a line of a file of the package.
type srcLine struct {
	file string
	line int
}

// DetectsTests names added lines of non-test code that check for go test.
func (Driver) DetectsTests(dir string, patch []unidiff.File, _ func(string) bool) []string {
	var bad []string
	added := map[srcLine]bool{}
	flagged := map[srcLine]bool{}
	pkgs := map[string]bool{}
	for _, f := range patch {
		p := f.NewPath
		if p == "" || !isNonTestGo(p) {
			continue
		}
		for _, l := range f.Changes() {
			if !l.Added() {
				continue
			}
			at := srcLine{p, l.NewLine}
			added[at] = true
			pkgs[path.Dir(p)] = true
			if d, ok := gaterules.OneLineForm(p, l.Text, goLineDetections); ok {
				bad = append(bad, gaterules.Detected(p, l.NewLine, d.How, gaterules.Norm(l.Text)))
				flagged[at] = true
			}
		}
	}
	for _, pkg := range gaterules.SortedKeys(pkgs) {
		for _, d := range testDetection(dir, pkg, added) {
			if !flagged[d.at] {
				flagged[d.at] = true
				bad = append(bad, fmt.Sprintf("%s:%d: detects that it runs under test %s: %s", d.at.file, d.at.line, d.how, d.text))
			}
		}
	}
	return bad
}

// isNonTestGo reports Go files that go build compiles into the package (as
// far as their names tell).
func isNonTestGo(p string) bool {
	return strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") && !(Driver{}).IsTestData(p)
}

// testSign is one ingredient of test detection.
type testSign int

const (
	signTesting    testSign = iota // testing.Testing()
	signFlagName                   // "test.v", "-test.run", … : go test's flags by name
	signExe                        // os.Executable(), os.Args: the binary's name
	signExeName                    // ".test", ".test.exe", "go-build": what a test binary is called
	signStack                      // runtime.Caller(s), FuncForPC, CallersFrames, runtime.Stack, debug.Stack, pprof.Lookup
	signFrame                      // "testing.", "tRunner", "_test.go", ".Test": what a test frame shows
	signFlags                      // the flag package, os.Args
	signFlagPrefix                 // "test.", "-test.": go test's flags by prefix
	signProc                       // "/proc/…": a path in the process file system
	signPid                        // os.Getpid(), os.Getppid(), "/proc/self", "self": which process in it
	signGoTest                     // "go test", "go\x00test", "test": go test's command line
	signBuild                      // debug.ReadBuildInfo, buildinfo.ReadFile: the binary's build information
	numSigns
)

// detections are the ingredients, alone or together, that make test
// detection, and how the evidence says it. Ingredients count together when
// they are in one top-level declaration (or in declarations it refers to by
// name): a bare runtime.Caller that logs a line number, an os.Executable
// that finds files next to the binary, a read of /proc/self/status for the
// memory in use, debug.ReadBuildInfo for a version, or a ".test" domain
// compared with a host name are not test detection on their own.
var detections = []struct {
	signs []testSign
	how   string
}{
	{[]testSign{signTesting}, howTesting},
	{[]testSign{signFlagName}, howFlagName},
	{[]testSign{signExe, signExeName}, howExe},
	{[]testSign{signStack, signFrame}, "by looking for test frames in the call stack"},
	{[]testSign{signFlags, signFlagPrefix}, "by looking for go test's flags"},
	{[]testSign{signProc, signPid, signExeName}, "by reading its own process in /proc (/proc/self or /proc/<pid>: exe, cmdline, status…) for a test binary's name"},
	{[]testSign{signProc, signPid, signFlagPrefix}, "by looking for go test's flags in its command line in /proc"},
	{[]testSign{signProc, signPid, signGoTest}, "by reading go test's command line in /proc (its own process's or its parent's)"},
	{[]testSign{signBuild, signExeName}, "by its build information (debug.ReadBuildInfo) and a test binary's name"},
}

// testFlagRE matches go test's flags as the test binary knows them.
var testFlagRE = regexp.MustCompile(`^-{0,2}test\.(v|run|skip|bench\w*|count|cover\w*|cpu\w*|failfast|fullpath|fuzz\w*|gocoverdir|list|memprofile\w*|mutexprofile\w*|blockprofile\w*|outputdir|paniconexit0|parallel|short|shuffle|testlogfile|timeout|trace|artifacts)(=.*)?$`)

// literalSigns says what a string literal's value can be evidence of.
func literalSigns(v string) []testSign {
	var out []testSign
	if testFlagRE.MatchString(v) {
		out = append(out, signFlagName)
	}
	if v == "test." || v == "-test." || v == "--test." {
		out = append(out, signFlagPrefix)
	}
	if strings.HasSuffix(v, ".test") || strings.HasSuffix(v, ".test.exe") || strings.Contains(v, `.test$`) ||
		strings.Contains(v, `\.test`) || strings.Contains(v, "go-build") || strings.Contains(v, "/_test/") {
		out = append(out, signExeName)
	}
	if strings.Contains(v, "testing.") || strings.Contains(v, "testing/") || strings.Contains(v, "tRunner") ||
		strings.Contains(v, "_test.go") || strings.Contains(v, ".Test") || v == "Test" {
		out = append(out, signFrame)
	}
	if v == "/proc" || strings.HasPrefix(v, "/proc/") {
		out = append(out, signProc)
	}
	if strings.HasPrefix(v, "/proc/self") || strings.HasPrefix(v, "/proc/thread-self") || v == "self" || v == "thread-self" {
		out = append(out, signPid)
	}
	if strings.Contains(v, "go test") || strings.Contains(v, "go\x00test") || v == "test" {
		out = append(out, signGoTest)
	}
	return out
}

// detection is one finding of testDetection.
type detection struct {
	at   srcLine
	how  string
	text string // the line, as written
}

// detectUnit is one top-level declaration and what it holds.
type detectUnit struct {
	names []string                    // what it declares
	has   [numSigns]bool              // the ingredients in it or in what it refers to
	added [numSigns]map[srcLine]bool  // the added lines they are on
	uses  map[string]map[srcLine]bool // identifiers it refers to, where
}

// mark records ingredient s at line, and reports whether it is news.
func (u *detectUnit) mark(s testSign, line srcLine, added bool) bool {
	changed := !u.has[s]
	u.has[s] = true
	if added && !u.added[s][line] {
		u.added[s][line] = true
		changed = true
	}
	return changed
}

// testDetection reads the non-test Go files of the package in directory pkg
// after the patch and returns the test detection in them that involves an
// added line.
func testDetection(dir, pkg string, added map[srcLine]bool) []detection {
	names, err := gaterules.ListFiles(dir, pkg)
	if err != nil {
		return nil // the static gate reports a package it cannot read
	}
	fset := token.NewFileSet()
	text := map[string][]string{}
	var units []*detectUnit
	for _, name := range names {
		p := path.Join(pkg, name)
		if !isNonTestGo(p) {
			continue
		}
		src, err := untrusted.ReadFile(dir, p, maxDetectBytes)
		if err != nil {
			continue
		}
		af, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			continue // the static gate reports code that does not parse
		}
		text[p] = strings.Split(string(src), "\n")
		units = append(units, declUnits(fset, af, added)...)
	}
	declared := map[string][]*detectUnit{}
	for _, u := range units {
		for _, n := range u.names {
			declared[n] = append(declared[n], u)
		}
	}

	// What a declaration refers to by name lends it its ingredients: a
	// helper that returns os.Executable's answer, a constant ".test", in
	// any file of the package.
	for changed := true; changed; {
		changed = false
		for _, u := range units {
			for name, at := range u.uses {
				for _, d := range declared[name] {
					if d == u {
						continue
					}
					for s := range numSigns {
						if !d.has[s] {
							continue
						}
						for l := range at {
							changed = u.mark(s, l, added[l]) || changed
						}
						for l := range d.added[s] {
							changed = u.mark(s, l, true) || changed
						}
					}
				}
			}
		}
	}

	var out []detection
	seen := map[detection]bool{}
	for _, u := range units {
		for _, det := range detections {
			var first srcLine
			all := true
			for _, s := range det.signs {
				if !u.has[s] {
					all = false
					break
				}
				for l := range u.added[s] {
					if first.file == "" || l.file < first.file || l.file == first.file && l.line < first.line {
						first = l
					}
				}
			}
			if !all || first.file == "" {
				continue
			}
			d := detection{at: first, how: det.how}
			if lines := text[first.file]; first.line <= len(lines) {
				d.text = gaterules.Norm(lines[first.line-1])
			}
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].at.file != out[j].at.file {
			return out[i].at.file < out[j].at.file
		}
		return out[i].at.line < out[j].at.line
	})
	return out
}

// declUnits are the top-level declarations of a file, with what they hold.
func declUnits(fset *token.FileSet, af *ast.File, added map[srcLine]bool) []*detectUnit {
	imports := readImports(af)
	at := func(n ast.Node) srcLine {
		p := fset.Position(n.Pos())
		return srcLine{p.Filename, p.Line}
	}
	var units []*detectUnit
	for _, d := range af.Decls {
		u := &detectUnit{uses: map[string]map[srcLine]bool{}}
		for s := range u.added {
			u.added[s] = map[srcLine]bool{}
		}
		switch d := d.(type) {
		case *ast.FuncDecl:
			u.names = []string{d.Name.Name}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						u.names = append(u.names, n.Name)
					}
				}
			}
		}
		mark := func(s testSign, n ast.Node) { u.mark(s, at(n), added[at(n)]) }
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch {
				case imports.is(n.Fun, "testing", "Testing"):
					mark(signTesting, n)
				case imports.is(n.Fun, "os", "Executable"):
					mark(signExe, n)
				case imports.is(n.Fun, "runtime", "Caller", "Callers", "CallersFrames", "FuncForPC", "Stack"),
					imports.is(n.Fun, "runtime/debug", "Stack"), imports.is(n.Fun, "runtime/pprof", "Lookup"):
					mark(signStack, n)
				case imports.is(n.Fun, "runtime/debug", "ReadBuildInfo"), imports.is(n.Fun, "debug/buildinfo", "ReadFile", "Read"):
					mark(signBuild, n)
				case imports.is(n.Fun, "os", "Getpid", "Getppid"), imports.is(n.Fun, "syscall", "Getpid", "Getppid"),
					imports.is(n.Fun, "golang.org/x/sys/unix", "Getpid", "Getppid"):
					mark(signPid, n)
				}
			case *ast.SelectorExpr:
				if imports.is(n, "os", "Args") {
					mark(signExe, n)
					mark(signFlags, n)
				}
				if id, ok := n.X.(*ast.Ident); ok && imports[id.Name] == "flag" {
					mark(signFlags, n)
				}
			case *ast.Ident:
				if imports.is(n, "os", "Args") {
					mark(signExe, n)
					mark(signFlags, n)
				}
				if u.uses[n.Name] == nil {
					u.uses[n.Name] = map[srcLine]bool{}
				}
				u.uses[n.Name][at(n)] = true
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if v, err := strconv.Unquote(n.Value); err == nil {
						for _, s := range literalSigns(v) {
							mark(s, n)
						}
					}
				}
			}
			return true
		})
		units = append(units, u)
	}
	return units
}

// importMap maps the names a file gives its imports to their paths; "."
// imports are listed under ".".
type importMap map[string]string

func readImports(f *ast.File) importMap {
	m := importMap{}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		if name == "." {
			m["."+p] = p
			continue
		}
		m[name] = p
	}
	return m
}

// is reports whether x names one of names in the package imported from
// pkg: pkg.Name, or Name when pkg is dot-imported.
func (m importMap) is(x ast.Expr, pkg string, names ...string) bool {
	var name string
	switch x := x.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		if !ok || m[id.Name] != pkg {
			return false
		}
		name = x.Sel.Name
	case *ast.Ident:
		if _, ok := m["."+pkg]; !ok {
			return false
		}
		name = x.Name
	default:
		return false
	}
	for _, n := range names {
		if name == n {
			return true
		}
	}
	return false
}
