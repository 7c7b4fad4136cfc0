// Package joblogtest is test support for the console readers: the
// failures of a report as the tests compare them, and a driver's console
// fixture read with the report of the same run.
package joblogtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/redfix/redfix/pkg/report"
)

// FailureIDs are a result's failures and build failures as ids with their
// kind, sorted: what a log and the report of the same run must agree on.
func FailureIDs(r report.Result) []string {
	var ids []string
	for _, f := range r.Failures {
		ids = append(ids, "failure "+f.ID()+" kind="+f.Kind)
	}
	for _, f := range r.BuildErrors {
		ids = append(ids, "build "+f.ID()+" kind="+f.Kind)
	}
	slices.Sort(ids)
	return ids
}

// Fixture reads a runner's console output, dir/NAME.log, and the report
// the same run wrote, dir/counterpart (NAME.xml when ""), parsed.
func Fixture(t testing.TB, dir, name, counterpart string) ([]byte, report.Result) {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	if counterpart == "" {
		counterpart = name + ".xml"
	}
	data, err := os.ReadFile(filepath.Join(dir, counterpart))
	if err != nil {
		t.Fatal(err)
	}
	res, err := report.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", counterpart, err)
	}
	return log, res
}
