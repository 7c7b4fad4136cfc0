package report

import (
	"bytes"
	"os"
	"slices"
	"testing"
)

// A dialect is what makes a runner's cases canonical: read in none, a jest
// report's tests are named as any report's (classname and name; the
// suite's name for an empty classname, here the file), its describe blocks
// left as jest joined them and its files that did not load no build
// errors; read in the registered ones (the Node driver's, loaded with the
// tests), by their file and titles.
func TestWithoutADialectCasesAreAnyReports(t *testing.T) {
	data, err := os.ReadFile("testdata/junit/jest-junit-file.xml")
	if err != nil {
		t.Fatal(err)
	}
	lim := junitLimits{bytes: MaxJUnitBytes, depth: maxJUnitDepth, cases: maxJUnitCases, attrs: maxJUnitAttrs, suiteOutput: maxSuiteOutput}
	plain, err := parseJUnitIn(bytes.NewReader(data), lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"price.adds nothing at zero", "src/price.test.js::top level passes"}; !slices.Equal(plain.Passed, want) {
		t.Errorf("passed in no dialect %q, want %q", plain.Passed, want)
	}
	if len(plain.Failures) == 0 || plain.Failures[0].ID() != "price › discount.applies the discount" {
		t.Fatalf("failures in no dialect %+v", plain.Failures)
	}
	if len(plain.BuildErrors) != 0 {
		t.Errorf("files that did not load read in no dialect: %+v", plain.BuildErrors)
	}
	canonical, err := ParseJUnit(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"src/price.test.js::price > adds nothing at zero", "src/price.test.js::top level passes"}; !slices.Equal(canonical.Passed, want) {
		t.Errorf("passed in the registered dialects %q, want %q", canonical.Passed, want)
	}
}
