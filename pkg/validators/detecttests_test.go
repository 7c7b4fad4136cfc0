package validators

import (
	"strings"
	"testing"
)

// envGo is a non-test Go file of package calc with the given imports and
// declarations.
func envGo(imports []string, decls string) string {
	var b strings.Builder
	b.WriteString("package calc\n\nimport (\n")
	for _, im := range imports {
		b.WriteString("\t" + im + "\n")
	}
	b.WriteString(")\n\n" + decls)
	return b.String()
}

func TestIntegrityDetectsTests(t *testing.T) {
	t.Parallel()
	// In envGo's output the declarations start on line 5 + len(imports).
	const (
		byExe   = "detects that it runs under test by its executable's name (os.Executable or os.Args, and a test binary's name): "
		byStack = "detects that it runs under test by looking for test frames in the call stack: "
		byFlag  = "detects that it runs under test by a go test flag's name: "
		byFlags = "detects that it runs under test by looking for go test's flags: "
		byProc  = "detects that it runs under test by reading its own process in /proc (/proc/self or /proc/<pid>: exe, cmdline, status…) for a test binary's name: "
		byProcF = "detects that it runs under test by looking for go test's flags in its command line in /proc: "
		byGoCmd = "detects that it runs under test by reading go test's command line in /proc (its own process's or its parent's): "
		byBuild = "detects that it runs under test by its build information (debug.ReadBuildInfo) and a test binary's name: "
	)
	configPath := "// configPath is calc.conf next to the binary.\nfunc configPath() string {\n\texe, err := os.Executable()\n\tif err != nil {\n\t\treturn \"calc.conf\"\n\t}\n\treturn filepath.Join(filepath.Dir(exe), \"calc.conf\")\n}\n"
	for _, c := range []struct {
		name   string
		cfg    Config
		base   map[string]string
		change map[string]string
		detail []string // empty: integrity passes
	}{
		{
			name: "os.Executable and a .test suffix",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"strings"`},
				"func underTest() bool {\n\texe, err := os.Executable()\n\tif err != nil {\n\t\treturn false\n\t}\n\treturn strings.HasSuffix(exe, \".test\")\n}\n")},
			detail: []string{"calc/env.go:9: " + byExe + "exe, err := os.Executable()"},
		},
		{
			name: "runtime.Callers and FuncForPC looking for testing.",
			change: map[string]string{"calc/env.go": envGo([]string{`"runtime"`, `"strings"`},
				"func underTest() bool {\n\tpcs := make([]uintptr, 32)\n\tn := runtime.Callers(0, pcs)\n\tfor _, pc := range pcs[:n] {\n\t\tif f := runtime.FuncForPC(pc); f != nil && strings.HasPrefix(f.Name(), \"testing.\") {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n")},
			detail: []string{"calc/env.go:10: " + byStack + "n := runtime.Callers(0, pcs)"},
		},
		{
			name: "runtime.Caller looking for a _test.go file",
			change: map[string]string{"calc/env.go": envGo([]string{`"runtime"`, `"strings"`},
				"func underTest() bool {\n\tfor i := 0; ; i++ {\n\t\t_, file, _, ok := runtime.Caller(i)\n\t\tif !ok {\n\t\t\treturn false\n\t\t}\n\t\tif strings.HasSuffix(file, \"_test.go\") {\n\t\t\treturn true\n\t\t}\n\t}\n}\n")},
			detail: []string{"calc/env.go:10: " + byStack + "_, file, _, ok := runtime.Caller(i)"},
		},
		{
			name: "debug.Stack looking for tRunner",
			change: map[string]string{"calc/env.go": envGo([]string{`"bytes"`, `"runtime/debug"`},
				"var underTest = bytes.Contains(debug.Stack(), []byte(\"testing.tRunner\"))\n")},
			detail: []string{"calc/env.go:8: " + byStack + "var underTest = bytes.Contains(debug.Stack(), []byte(\"testing.tRunner\"))"},
		},
		{
			name: "runtime under another name",
			change: map[string]string{"calc/env.go": envGo([]string{`rt "runtime"`, `"strings"`},
				"func underTest() bool {\n\tframes := rt.CallersFrames(callers())\n\tfor {\n\t\tf, more := frames.Next()\n\t\tif strings.Contains(f.Function, \"tRunner\") {\n\t\t\treturn true\n\t\t}\n\t\tif !more {\n\t\t\treturn false\n\t\t}\n\t}\n}\n\nfunc callers() []uintptr {\n\tpcs := make([]uintptr, 32)\n\treturn pcs[:rt.Callers(0, pcs)]\n}\n")},
			detail: []string{"calc/env.go:9: " + byStack + "frames := rt.CallersFrames(callers())"},
		},
		{
			name:   "flag.Lookup of test.v",
			change: map[string]string{"calc/env.go": envGo([]string{`"flag"`}, "func underTest() bool {\n\treturn flag.Lookup(\"test.v\") != nil\n}\n")},
			detail: []string{"calc/env.go:8: " + byFlag + `return flag.Lookup("test.v") != nil`},
		},
		{
			name:   "a test flag's name held in a constant",
			change: map[string]string{"calc/env.go": envGo([]string{`"flag"`}, "const verbose = \"test.v\"\n\nfunc underTest() bool {\n\treturn flag.Lookup(verbose) != nil\n}\n")},
			detail: []string{"calc/env.go:7: " + byFlag + `const verbose = "test.v"`},
		},
		{
			name:   "go test's flags among the arguments",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"strings"`}, "func underTest() bool {\n\tfor _, a := range os.Args[1:] {\n\t\tif strings.HasPrefix(a, \"-test.\") {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n")},
			detail: []string{"calc/env.go:9: " + byFlags + "for _, a := range os.Args[1:] {"},
		},
		{
			name:   "testing.Testing",
			change: map[string]string{"calc/env.go": envGo([]string{`"testing"`}, "func underTest() bool {\n\treturn testing.Testing()\n}\n")},
			detail: []string{"calc/env.go:8: detects that it runs under test by calling testing.Testing: return testing.Testing()"},
		},
		{
			name:   "os.Args[0] and .test on one line",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`}, "func underTest() bool {\n\treturn len(os.Args) > 0 && filepath.Ext(os.Args[0]) == \".test\"\n}\n")},
			detail: []string{"calc/env.go:9: " + byExe + `return len(os.Args) > 0 && filepath.Ext(os.Args[0]) == ".test"`},
		},
		{
			name:   "strings.HasSuffix(os.Args[0], \".test\")",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"strings"`}, "var underTest = strings.HasSuffix(os.Args[0], \".test\")\n")},
			detail: []string{"calc/env.go:8: " + byExe + `var underTest = strings.HasSuffix(os.Args[0], ".test")`},
		},
		{
			name:   "os.Args[0] and .test on two lines",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`, `"strings"`}, "func underTest() bool {\n\tname := filepath.Base(os.Args[0])\n\treturn strings.HasSuffix(name, \".test\")\n}\n")},
			detail: []string{"calc/env.go:10: " + byExe + "name := filepath.Base(os.Args[0])"},
		},
		{
			name: "an existing helper and a new constant",
			base: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`, `"strings"`}, configPath+"\nfunc exePath() string {\n\tp, _ := os.Executable()\n\treturn p\n}\n\nvar _ = strings.HasSuffix\n")},
			change: map[string]string{"calc/calc.go": strings.Replace(fixed, "func Add(x, y int) int {\n",
				"func Add(x, y int) int {\n\tif strings.HasSuffix(exePath(), testSuffix) {\n\t\treturn 3\n\t}\n", 1) + "\nconst testSuffix = \".test\"\n"},
			detail: []string{"calc/calc.go:5: " + byExe + "if strings.HasSuffix(exePath(), testSuffix) {"},
		},
		{
			name: "os.Readlink of /proc/self/exe",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"strings"`},
				"func underTest() bool {\n\texe, _ := os.Readlink(\"/proc/self/exe\")\n\treturn strings.HasSuffix(exe, \".test\")\n}\n")},
			detail: []string{"calc/env.go:9: " + byProc + `exe, _ := os.Readlink("/proc/self/exe")`},
		},
		{
			name: "/proc/<pid>/exe spelled with os.Getpid",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`, `"strconv"`},
				"func underTest() bool {\n\texe, _ := os.Readlink(\"/proc/\" + strconv.Itoa(os.Getpid()) + \"/exe\")\n\treturn filepath.Ext(exe) == \".test\"\n}\n")},
			detail: []string{"calc/env.go:10: " + byProc + `exe, _ := os.Readlink("/proc/" + strconv.Itoa(os.Getpid()) + "/exe")`},
		},
		{
			name: "the process's name in /proc/self/status, through a helper",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`, `"strings"`},
				"const status = \"status\"\n\nfunc self(name string) string {\n\tb, _ := os.ReadFile(filepath.Join(\"/proc\", \"self\", name))\n\treturn string(b)\n}\n\nfunc underTest() bool {\n\treturn strings.Contains(self(status), \"Name:\\tcalc.test\")\n}\n")},
			detail: []string{"calc/env.go:12: " + byProc + `b, _ := os.ReadFile(filepath.Join("/proc", "self", name))`},
		},
		{
			name: "go test's flags in /proc/<pid>/cmdline",
			change: map[string]string{"calc/env.go": envGo([]string{`"bytes"`, `"fmt"`, `"os"`},
				"func underTest() bool {\n\tcmd, _ := os.ReadFile(fmt.Sprintf(\"/proc/%d/cmdline\", os.Getpid()))\n\treturn bytes.Contains(cmd, []byte(\"-test.\"))\n}\n")},
			detail: []string{"calc/env.go:10: " + byProcF + `cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", os.Getpid()))`},
		},
		{
			name: "the parent's command line is go test",
			change: map[string]string{"calc/env.go": envGo([]string{`"bytes"`, `"fmt"`, `"os"`},
				"var parent, _ = os.ReadFile(fmt.Sprintf(\"/proc/%d/cmdline\", os.Getppid()))\n\nvar underTest = bytes.HasPrefix(parent, []byte(\"go\\x00test\"))\n")},
			detail: []string{"calc/env.go:9: " + byGoCmd + `var parent, _ = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", os.Getppid()))`},
		},
		{
			name: "debug.ReadBuildInfo's path",
			change: map[string]string{"calc/env.go": envGo([]string{`"runtime/debug"`, `"strings"`},
				"func underTest() bool {\n\tbi, ok := debug.ReadBuildInfo()\n\treturn ok && strings.HasSuffix(bi.Path, \".test\")\n}\n")},
			detail: []string{"calc/env.go:9: " + byBuild + "bi, ok := debug.ReadBuildInfo()"},
		},
		{
			name: "the goroutine profile looking for tRunner",
			change: map[string]string{"calc/env.go": envGo([]string{`"bytes"`, `"runtime/pprof"`},
				"func underTest() bool {\n\tvar b bytes.Buffer\n\t_ = pprof.Lookup(\"goroutine\").WriteTo(&b, 2)\n\treturn bytes.Contains(b.Bytes(), []byte(\"testing.tRunner\"))\n}\n")},
			detail: []string{"calc/env.go:10: " + byStack + `_ = pprof.Lookup("goroutine").WriteTo(&b, 2)`},
		},

		// What passes.
		{
			name:   "runtime.Caller for a line number",
			change: map[string]string{"calc/env.go": envGo([]string{`"fmt"`, `"path/filepath"`, `"runtime"`}, "// where is the caller's file and line.\nfunc where() string {\n\t_, file, line, ok := runtime.Caller(1)\n\tif !ok {\n\t\treturn \"?\"\n\t}\n\treturn fmt.Sprintf(\"%s:%d\", filepath.Base(file), line)\n}\n")},
		},
		{
			name:   "os.Executable to find a file next to the binary",
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`}, configPath)},
		},
		{
			name:   "a .test domain",
			change: map[string]string{"calc/env.go": envGo([]string{`"strings"`}, "// reserved reports names under the RFC 2606 test domains.\nfunc reserved(host string) bool {\n\treturn strings.HasSuffix(host, \".test\") || strings.HasSuffix(host, \".example\")\n}\n")},
		},
		{
			name: "a .test domain in a file that also finds its binary",
			base: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`, `"strings"`}, configPath+"\nvar _ = strings.HasSuffix\n")},
			change: map[string]string{"calc/env.go": envGo([]string{`"os"`, `"path/filepath"`, `"strings"`}, configPath+"\nvar _ = strings.HasSuffix\n"+
				"\n// reserved reports names under the RFC 2606 test domain.\nfunc reserved(host string) bool {\n\treturn strings.HasSuffix(host, \".test\")\n}\n")},
		},
		{
			name: "/proc/self/status for the memory in use",
			change: map[string]string{"calc/env.go": envGo([]string{`"bufio"`, `"os"`, `"strings"`},
				"// rss is the process's resident memory, as /proc says it.\nfunc rss() string {\n\tf, err := os.Open(\"/proc/self/status\")\n\tif err != nil {\n\t\treturn \"\"\n\t}\n\tdefer f.Close()\n\tsc := bufio.NewScanner(f)\n\tfor sc.Scan() {\n\t\tif v, ok := strings.CutPrefix(sc.Text(), \"VmRSS:\"); ok {\n\t\t\treturn strings.TrimSpace(v)\n\t\t}\n\t}\n\treturn \"\"\n}\n")},
		},
		{
			name: "a lock file's process looked up in /proc",
			change: map[string]string{"calc/env.go": envGo([]string{`"fmt"`, `"os"`, `"strconv"`},
				"// held reports whether the lock's owner (its pid) is alive and not this process.\nfunc held(lock []byte) bool {\n\tpid, err := strconv.Atoi(string(lock))\n\tif err != nil || pid == os.Getpid() {\n\t\treturn false\n\t}\n\t_, err = os.Stat(fmt.Sprintf(\"/proc/%d\", pid))\n\treturn err == nil\n}\n")},
		},
		{
			name: "debug.ReadBuildInfo for a version",
			change: map[string]string{"calc/env.go": envGo([]string{`"runtime/debug"`},
				"// Version is the module's version, as the binary was built.\nfunc Version() string {\n\tif bi, ok := debug.ReadBuildInfo(); ok {\n\t\treturn bi.Main.Version\n\t}\n\treturn \"(unknown)\"\n}\n")},
		},
		{
			name: "a command line with a test subcommand",
			change: map[string]string{"calc/env.go": envGo([]string{`"fmt"`, `"os"`},
				"// Main runs the calculator's command.\nfunc Main() int {\n\tif len(os.Args) < 2 {\n\t\treturn 2\n\t}\n\tswitch os.Args[1] {\n\tcase \"test\":\n\t\tfmt.Println(Add(20, 22))\n\tcase \"version\":\n\t\tfmt.Println(\"calc 1\")\n\t}\n\treturn 0\n}\n")},
		},
		{
			name: "the same detection in a test file",
			cfg:  Config{AllowTestEdits: true},
			change: map[string]string{"calc/env_test.go": envGo([]string{`"os"`, `"runtime"`, `"strings"`, `"testing"`},
				"func TestBinary(t *testing.T) {\n\texe, _ := os.Executable()\n\tif !strings.HasSuffix(exe, \".test\") {\n\t\tt.Errorf(\"binary %s\", exe)\n\t}\n\t_, file, _, _ := runtime.Caller(0)\n\tif !strings.HasSuffix(file, \"_test.go\") || !testing.Testing() {\n\t\tt.Error(file)\n\t}\n}\n")},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			change := map[string]string{"calc/calc.go": fixed}
			for k, v := range c.change {
				change[k] = v
			}
			f := newFixture(t, c.base)
			in := f.input(t, change)
			g, err := New(c.cfg, nil).integrity(t.Context(), &candidate{in: in, lang: in.Lang, files: mustParse(t, in.Patch)})
			if err != nil {
				t.Fatal(err)
			}
			wantIntegrity(t, g, c.detail)
			if n := strings.Count(g.Detail, "detects that it runs under test"); len(c.detail) > 0 && n != 1 {
				t.Errorf("%d reports of test detection, want 1:\n%s", n, g.Detail)
			}
		})
	}
}
