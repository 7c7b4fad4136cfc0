package golang

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/joblog/joblogtest"
	"github.com/redfix/redfix/pkg/report"
)

// sampleModule writes a module whose tests pass, fail (with subtests), panic,
// and a package whose tests do not build.
func consoleModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.22\n",
		"ok/ok.go":      "package ok\n\nfunc One() int { return 1 }\n",
		"ok/ok_test.go": "package ok\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
		"calc/calc.go":  "package calc\n\nfunc Add(a, b int) int { return a - b }\n\nfunc Div(a, b int) int { return a / b }\n",
		"calc/calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	t.Log("adding")
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d, want 3", got)
	}
}

func TestTable(t *testing.T) {
	for _, tc := range []struct{ name string; a, b, want int }{{"zero", 0, 0, 0}, {"one", 1, 1, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Add(tc.a, tc.b); got != tc.want {
				t.Fatalf("Add(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestFine(t *testing.T) {}
`,
		"crash/crash.go": "package crash\n\nfunc At(s []int, i int) int { return s[i] }\n",
		"crash/crash_test.go": `package crash

import "testing"

func TestFirst(t *testing.T) {}

func TestAt(t *testing.T) {
	if At([]int{1}, 3) != 1 {
		t.Fatal("unreachable")
	}
}
`,
		"broken/broken.go":      "package broken\n\nfunc X() int { return 1 }\n",
		"broken/broken_test.go": "package broken\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { var unused int; _ = Y() }\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runGoTest(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-count=1"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go test %v passed; the sample must fail:\n%s", args, out)
	}
	return out
}

// asActionsLog prefixes every line as GitHub Actions stores a job's log.
func asActionsLog(out []byte) []byte {
	var b strings.Builder
	b.WriteString("\ufeff2026-11-20T10:00:00.0000000Z ##[group]Run go test ./...\n")
	t0 := time.Date(2026, 11, 20, 10, 0, 1, 0, time.UTC)
	for i, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		fmt.Fprintf(&b, "%s %s\r\n", t0.Add(time.Duration(i)*time.Millisecond).Format("2006-01-02T15:04:05.0000000Z"), l)
	}
	b.WriteString("2026-11-20T10:00:09.0000000Z ##[error]Process completed with exit code 1.\n")
	return []byte(b.String())
}

type summary struct {
	failures map[string]string // test id → message
	builds   []string
}

func summarize(t *testing.T, r report.Result) summary {
	t.Helper()
	s := summary{failures: map[string]string{}}
	for _, f := range r.Failures {
		s.failures[f.ID()] = f.Message
	}
	for _, b := range r.BuildErrors {
		s.builds = append(s.builds, b.Package)
	}
	slices.Sort(s.builds)
	return s
}

// TestGoTestText compares what the text of real go test runs gives, with
// and without -v, taken from an Actions-style log, with what go test -json
// of the same module gives.
func TestGoTestText(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on a sample module")
	}
	dir := consoleModule(t)
	want, err := report.Parse(runGoTest(t, dir, "-json", "./..."))
	if err != nil {
		t.Fatal(err)
	}
	ws := summarize(t, want)
	if len(ws.failures) != 3 || len(ws.builds) != 1 {
		t.Fatalf("go test -json of the sample: %+v", ws)
	}
	for _, mode := range []string{"plain", "verbose"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"./..."}
			if mode == "verbose" {
				args = []string{"-v", "./..."}
			}
			text := runGoTest(t, dir, args...)
			converted := GoTestText(joblog.Lines(asActionsLog(text)))
			if converted == nil {
				t.Fatalf("no go test result found in:\n%s", text)
			}
			got, err := report.Parse(converted)
			if err != nil {
				t.Fatalf("converted report does not parse: %v\n%s", err, converted)
			}
			gs := summarize(t, got)
			for id, msg := range ws.failures {
				g, ok := gs.failures[id]
				if !ok {
					t.Errorf("failure %s missing; got %v", id, gs.failures)
					continue
				}
				if g != msg {
					t.Errorf("%s: message %q, want %q", id, g, msg)
				}
			}
			for id := range gs.failures {
				if _, ok := ws.failures[id]; !ok {
					t.Errorf("failure %s was not in go test -json", id)
				}
			}
			if !slices.Equal(gs.builds, ws.builds) {
				t.Errorf("build errors %v, want %v", gs.builds, ws.builds)
			}
			for _, f := range got.Failures {
				if strings.Contains(f.Output, "##[") || strings.Contains(f.Output, "2026-11-20T") {
					t.Errorf("%s output keeps the log's decorations:\n%s", f.ID(), f.Output)
				}
			}
			for _, b := range got.BuildErrors {
				if !strings.Contains(b.Output, "undefined: Y") {
					t.Errorf("build error of %s lacks the compiler's message:\n%s", b.Package, b.Output)
				}
			}
		})
	}
}

func TestGoTestTextNothing(t *testing.T) {
	if got := GoTestText(joblog.Lines([]byte("2026-11-20T10:00:00.0000000Z npm ERR! missing script: test\n"))); got != nil {
		t.Errorf("a log without go test output gave %s", got)
	}
}

// The stored fixtures (testdata/console/README.md: go test's output of one
// small module, plain and -v, and its -json run), read through
// ReadConsole, give the failures and build failures go test -json gives.
func TestReadConsoleAgreesWithJSON(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "console", "gotest.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("go test -json: %v", joblogtest.FailureIDs(want))
	if len(want.Failures) == 0 || len(want.BuildErrors) != 2 {
		t.Fatalf("go test -json of the fixture: %v", joblogtest.FailureIDs(want))
	}
	for _, mode := range []string{"plain", "verbose"} {
		t.Run(mode, func(t *testing.T) {
			log, err := os.ReadFile(filepath.Join("testdata", "console", "gotest-"+mode+".log"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := report.Parse(Driver{}.ReadConsole(joblog.Lines(log)))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := joblogtest.FailureIDs(got), joblogtest.FailureIDs(want); !slices.Equal(g, w) {
				t.Errorf("from the log:\n%s\nfrom go test -json:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
		})
	}
}
