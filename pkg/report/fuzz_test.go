package report

import (
	"strings"
	"testing"
)

// FuzzParse feeds the parsers arbitrary reports, cut anywhere: none
// panics, and a go test -json result never counts a test both as passed
// and as failed, nor a test that did not run as failed.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`{"Action":"run","Package":"m","Test":"TestA"}
{"Action":"output","Package":"m","Test":"TestA","Output":"    a_test.go:3: boom\n"}
{"Action":"fail","Package":"m","Test":"TestA","Elapsed":0}
{"Action":"fail","Package":"m","Elapsed":0}`,
		`{"Action":"run","Package":"m","Test":"TestP"}
{"Action":"run","Package":"m","Test":"TestP/a"}
{"Action":"pause","Package":"m","Test":"TestP/a"}
{"Action":"run","Package":"m","Test":"TestP/b"}
{"Action":"output","Package":"m","Test":"TestP/b","Output":"--- FAIL: TestP/b (0.00s)\n"}
{"Action":"fail","Package":"m","Test":"TestP/b","Elapsed":0}
{"Action":"output","Package":"m","Test":"TestP","Output":"panic: nil map [recovered]\n"}
{"Action":"fail","Package":"m","Test":"TestP","Elapsed":0}`,
		`<testsuites><testsuite name="s"><testcase classname="c" name="t"><failure message="m">body</failure></testcase></testsuite></testsuites>`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
		f.Add([]byte(s[:len(s)/2]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse(data)
		if err != nil || res.Format != "go-test-json" {
			return
		}
		failed := map[string]bool{}
		for _, fl := range res.Failures {
			if fl.Test == "" {
				t.Errorf("a test failure without a test: %+v", fl)
			}
			failed[fl.ID()] = true
		}
		for _, p := range res.Passed {
			if failed[p] {
				t.Errorf("%s both passed and failed", p)
			}
		}
		for _, n := range res.NotRun {
			if failed[n] || strings.TrimSpace(n) == "" {
				t.Errorf("%q did not run, yet is a failure", n)
			}
		}
	})
}
