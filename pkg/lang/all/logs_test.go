package all

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/config"
	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/report"
)

// Every registered driver reads logs: all.Logs asks each of them.
func TestLogsAsksEveryDriver(t *testing.T) {
	if n, want := len(Logs()), len(Drivers(config.Languages{}, 0, nil)); n != want {
		t.Errorf("%d console readers, want one per driver (%d)", n, want)
	}
}

// checkReports holds what any log, however hostile, may give: reports
// that parse, at most joblog.MaxFailures failures each, and ids that stay
// inside the checkout and carry no control characters.
func checkReports(t *testing.T, reps [][]byte) {
	t.Helper()
	for _, rep := range reps {
		res, err := report.Parse(rep)
		if err != nil {
			t.Fatalf("a log's report does not parse: %v\n%.2000s", err, rep)
		}
		if n := len(res.Failures) + len(res.BuildErrors); n > joblog.MaxFailures {
			t.Errorf("%d failures read from a log, more than %d", n, joblog.MaxFailures)
		}
		for _, f := range append(res.Failures, res.BuildErrors...) {
			id := f.ID()
			if len(id) > 4*joblog.MaxName || strings.ContainsAny(id, "\x00\x1b\r\n") {
				t.Errorf("an unsafe id read from a log: %q", id)
			}
			for _, seg := range strings.Split(strings.ReplaceAll(id, "::", "/"), "/") {
				if seg == ".." {
					t.Errorf("an id that climbs out of the checkout: %q", id)
				}
			}
		}
	}
}

// Hostile logs: a huge line, a million lines that look like results with
// absurd or climbing names, ANSI garbage. Each reader stays bounded and
// gives only safe ids.
func TestLogsHostile(t *testing.T) {
	var million bytes.Buffer
	million.WriteString("============================= test session starts ==============================\n")
	for i := range 1_000_000 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&million, "FAILED ../../etc/passwd::test_%d - boom\n", i)
		case 1:
			fmt.Fprintf(&million, "tests/test_x.py::test_%d FAILED [ 1%%]\n", i)
		case 2:
			fmt.Fprintf(&million, "  ● a › b%d\n", i)
		case 3:
			fmt.Fprintf(&million, "    --- FAIL: TestX/../../%d (0.00s)\n", i)
		default:
			fmt.Fprintf(&million, " FAIL  ../x.test.js > t%d\n", i)
		}
	}
	million.WriteString("=========================== short test summary info ============================\n")
	million.WriteString("Test Suites: 1 failed\n Test Files  1 failed (1)\nFAIL\texample.com/m\t0.1s\n")
	build := []byte("# example.com/p\n" + strings.Repeat("p.x:1:1: undefined: Y\n", 100_000) + strings.Repeat("FAIL\texample.com/p\t[build failed]\n", 100_000))
	cases := map[string][]byte{
		"a build failure told a hundred thousand times": build,
		"a huge line":     append([]byte("=== test session starts ===\nFAILED tests/test_x.py::"), bytes.Repeat([]byte("a"), 50<<20)...),
		"a million lines": million.Bytes(),
		"ANSI garbage":    bytes.Repeat([]byte("\x1b[31m\x1b]8;;\x07FAIL \x1b[0K\r● \x1b[999999999999m##[group]section_start:1:x\r\n"), 200_000),
		"absurd names":    []byte("=== test session starts ===\n=== short test summary info ===\nFAILED " + strings.Repeat("x", 100_000) + "::t\nFAILED /etc/passwd::t\nFAILED tests/a\x00b.py::t\n"),
	}
	for name, log := range cases {
		t.Run(name, func(t *testing.T) {
			checkReports(t, Logs().Reports(log))
		})
	}
}

// FuzzLogs reads any log through every driver's reader: it never panics,
// and what it gives holds checkReports. The seeds are the runners'
// fixtures.
func FuzzLogs(f *testing.F) {
	for _, dir := range []string{"../python/testdata/console", "../node/testdata/console"} {
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, p := range logs {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.x:3: no\nFAIL\nFAIL\texample.com/m\t0.1s\n"))
	f.Fuzz(func(t *testing.T, log []byte) {
		checkReports(t, Logs().Reports(log))
	})
}
