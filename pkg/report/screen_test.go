package report

import (
	"bufio"
	"strings"
	"testing"
)

// TestScreenRefusesWhatParseRefuses holds Screen to Parse: on each report
// both accept it, or both refuse it with the same reason.
func TestScreenRefusesWhatParseRefuses(t *testing.T) {
	event := `{"Action":"fail","Package":"example.com/calc","Test":"TestSum","Elapsed":0}`
	long := `{"Action":"output","Package":"example.com/calc","Test":"TestSum","Output":"` + strings.Repeat("x", 70<<10) + `"}`
	for _, tc := range []struct {
		name, report string
		ok           bool
	}{
		{"events", event + "\n", true},
		{"text before the events", "# example.com/calc\ncalc.go:3:1: syntax error\n" + event, false},
		{"text among the events", event + "\n# example.com/calc\n" + event, true},
		{"empty", "  \n", false},
		{"text", "ok  \texample.com/calc\t0.1s\n", false},
		{"no package", `{"Action":"output","Output":"hello\n"}` + "\n", false},
		{"build events only", `{"Action":"build-output","Package":"example.com/calc","ImportPath":"example.com/calc"}` + "\n", false},
		{"broken JSON", `{"Action":"fail","Package":` + "\n", false},
		{"a bad time", `{"Time":"yesterday","Action":"fail","Package":"example.com/calc"}` + "\n", false},
		{"line too long", event + "\n" + long + "\n", false},
		// At the scanner's limit (64 KB with the newline), where Screen
		// stops finding lines in place.
		{"a line one short of the limit", event + "\n" + sized(bufio.MaxScanTokenSize-2) + "\n", true},
		{"a line at the limit", event + "\n" + sized(bufio.MaxScanTokenSize-1) + "\n", true},
		{"a line past the limit", event + "\n" + sized(bufio.MaxScanTokenSize) + "\n", false},
		{"a last line at the limit, unended", event + "\n" + sized(bufio.MaxScanTokenSize-1), true},
		{"a last line past the limit, unended", event + "\n" + sized(bufio.MaxScanTokenSize), false},
		{"lines ended by CRLF", strings.ReplaceAll(event+"\n"+event+"\n", "\n", "\r\n"), true},
		{"junit", `<testsuite name="s" tests="1"><testcase classname="c" name="t"><failure message="m">boom</failure></testcase></testsuite>`, true},
		{"broken junit", `<testsuite name="s"><testcase`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, perr := Parse([]byte(tc.report))
			res, parsed, serr := Screen([]byte(tc.report))
			if (serr == nil) != tc.ok || (perr == nil) != tc.ok {
				t.Fatalf("Screen: %v; Parse: %v; want accepted %v", serr, perr, tc.ok)
			}
			if serr != nil {
				if serr.Error() != perr.Error() {
					t.Errorf("Screen says %q, Parse %q", serr, perr)
				}
				return
			}
			if res.Format != full.Format {
				t.Errorf("format %q, Parse's %q", res.Format, full.Format)
			}
			if parsed != (full.Format == "junit") {
				t.Errorf("parsed %v for %s", parsed, full.Format)
			}
			if parsed && len(res.Failures) != len(full.Failures) {
				t.Errorf("parsed JUnit with %d failures, Parse %d", len(res.Failures), len(full.Failures))
			}
		})
	}
}

// sized is a go test -json output event exactly n bytes long.
func sized(n int) string {
	head, tail := `{"Action":"output","Package":"example.com/calc","Test":"TestSum","Output":"`, `"}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}
