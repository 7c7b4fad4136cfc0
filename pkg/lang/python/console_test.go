package python

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/joblog/joblogtest"
	"github.com/redfix/redfix/pkg/report"
)

// Each fixture (pytest's console output of a run, testdata/console/README.md)
// read through ReadConsole gives the failures, with the same ids and kinds,
// that report.Parse gives of the --junitxml report the same run wrote.
func TestReadConsoleAgreesWithJUnit(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"default", "verbose", "collect", "nosummary", "setup"} {
		t.Run(mode, func(t *testing.T) {
			log, err := os.ReadFile(filepath.Join("testdata", "console", "pytest-"+mode+".log"))
			if err != nil {
				t.Fatal(err)
			}
			xml, err := os.ReadFile(filepath.Join("testdata", "console", "pytest-"+mode+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := report.Parse(xml)
			if err != nil {
				t.Fatal(err)
			}
			data := Driver{}.ReadConsole(joblog.Lines(log))
			if data == nil {
				t.Fatal("no pytest run found in the log")
			}
			got, err := report.Parse(data)
			if err != nil {
				t.Fatalf("the log's report does not parse: %v\n%s", err, data)
			}
			if g, w := joblogtest.FailureIDs(got), joblogtest.FailureIDs(want); !slices.Equal(g, w) {
				t.Errorf("from the log:\n%s\nfrom the JUnit report:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
			messages := map[string]string{}
			for _, f := range want.Failures {
				messages[f.ID()] = f.Message
			}
			for _, f := range append(got.Failures, got.BuildErrors...) {
				if f.Output == "" {
					t.Errorf("%s: no output", f.ID())
				}
				if w, ok := messages[f.ID()]; ok && f.Kind == "" && f.Message != w {
					t.Errorf("%s: message %q, want %q", f.ID(), f.Message, w)
				}
			}
			if mode == "verbose" && !slices.Equal(got.Passed, want.Passed) {
				t.Errorf("passed %v, want %v", got.Passed, want.Passed)
			}
		})
	}
}
