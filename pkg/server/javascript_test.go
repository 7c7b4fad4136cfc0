package server

import (
	"net/http"
	"os"
	"testing"
)

// A JUnit report real vitest wrote, posted as CI posts it, is accepted with
// its failures named canonically (FILE::describe > title) and its test
// files that did not load as build errors, as triage takes them.
func TestPostVitestJUnit(t *testing.T) {
	data, err := os.ReadFile("../report/testdata/junit/vitest.xml")
	if err != nil {
		t.Fatal(err)
	}
	srv, in, _, _ := setup(t, Options{})
	code, out := post(t, srv.URL+"/api/v1/reports?repo=/r&commit=abc&good=def", string(data), nil)
	if code != http.StatusAccepted || out["format"] != "junit" || out["failures"] != float64(3) || out["build_errors"] != float64(2) {
		t.Fatalf("code %d, body %v; want junit with 3 failures and 2 build errors", code, out)
	}
	p := in.subs[0].Parsed
	if p == nil || p.Failures[1].ID() != "src/price.test.ts::price > discount > applies the discount" || p.Failures[1].Message != "expected 91 to be 90 // Object.is equality" {
		t.Fatalf("parsed for triage: %+v", p)
	}
	if b := p.BuildErrors; b[0].Package != "src/broken.test.ts" || b[0].Test != "" || b[1].Package != "src/syntax.test.ts" {
		t.Errorf("build errors %+v, want the two test files that did not load", b)
	}
}
