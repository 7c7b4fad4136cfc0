package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseReports feeds the report parsers arbitrary input, seeded with
// the JUnit dialects of testdata: a malformed report is
// an error that says so, never a panic, and a parsed one is consistent.
func FuzzParseReports(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/junit/*.xml")
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"<",
		"<testsuite><testcase name=\"x\"><failure>",
		"<testsuites><testsuite><testsuite><testcase/></testsuite></testsuite></testsuites>",
		`{"Action":"run","Package":"m/a","Test":"TestX"}` + "\n" + `{"Action":"fail","Package":"m/a","Test":"TestX","Elapsed":0}` + "\n",
		`{"Action":"output","Package":"m/a","Output":"# m/a\na.go:3:2: undefined: x\n"}` + "\n" + `{"Action":"fail","Package":"m/a"}`,
		`{"Action":`,
		"plain text",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("an error with no message for %q", data)
			}
			if len(strings.TrimSpace(string(data))) == 0 && !errors.Is(err, ErrEmpty) {
				t.Fatalf("empty input: %v, want ErrEmpty", err)
			}
			return
		}
		if res.Format != "junit" && res.Format != "go-test-json" {
			t.Fatalf("format %q", res.Format)
		}
		if res.Total < len(res.Failures) {
			t.Fatalf("total %d below %d failures", res.Total, len(res.Failures))
		}
		for _, fl := range append(res.Failures, res.BuildErrors...) {
			if len(fl.Output) > maxOutput+64 {
				t.Fatalf("output of %d bytes, cap %d", len(fl.Output), maxOutput)
			}
			if utf8.ValidString(string(data)) && !utf8.ValidString(fl.Message) {
				t.Fatalf("message %q is not UTF-8", fl.Message)
			}
		}
	})
}
