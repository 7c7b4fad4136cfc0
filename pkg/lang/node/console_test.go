package node

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/report"
)

// consoleIDs are a result's failures and build failures as ids with their
// kind, sorted: what a log and the JUnit report of the same run must agree
// on.
func consoleIDs(r report.Result) []string {
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

// readFixture is a runner's console output and the JUnit report of the
// same run (testdata/console/README.md), the report parsed.
func readFixture(t *testing.T, name string) ([]byte, report.Result) {
	t.Helper()
	log, err := os.ReadFile(filepath.Join("testdata", "console", name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	xml, err := os.ReadFile(filepath.Join("testdata", "console", name+".xml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := report.Parse(xml)
	if err != nil {
		t.Fatal(err)
	}
	return log, want
}

// Each runner's console output, read through ReadConsole, gives the
// failures, with the same ids and kinds, that report.Parse gives of the
// JUnit report the same run wrote; a file that failed to load is the same
// build failure.
func TestReadConsoleAgreesWithJUnit(t *testing.T) {
	for _, name := range []string{"jest", "vitest", "mocha", "node-tap", "node-spec"} {
		t.Run(name, func(t *testing.T) {
			log, want := readFixture(t, name)
			data := Driver{}.ReadConsole(joblog.Lines(log))
			if data == nil {
				t.Fatal("no runner's output found in the log")
			}
			got, err := report.Parse(data)
			if err != nil {
				t.Fatalf("the log's report does not parse: %v\n%s", err, data)
			}
			if g, w := consoleIDs(got), consoleIDs(want); !slices.Equal(g, w) {
				t.Errorf("from the log:\n%s\nfrom the JUnit report:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
			for _, f := range append(got.Failures, got.BuildErrors...) {
				if f.Output == "" || f.Message == "" {
					t.Errorf("%s: message %q, output %q", f.ID(), f.Message, f.Output)
				}
			}
		})
	}
}
