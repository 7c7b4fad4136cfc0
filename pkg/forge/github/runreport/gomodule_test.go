package runreport

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sampleModule writes a module whose tests pass, fail (with subtests), panic,
// and a package whose tests do not build.
func sampleModule(t *testing.T) string {
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

func goTest(t *testing.T, dir string, args ...string) []byte {
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
