package node

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/joblog"
	"github.com/redfix/redfix/pkg/joblog/joblogtest"
	"github.com/redfix/redfix/pkg/report"
)

// Each runner's console output, read through ReadConsole, gives the
// failures, with the same ids and kinds, that report.Parse gives of the
// JUnit report the same run wrote; a file that failed to load is the same
// build failure.
func TestReadConsoleAgreesWithJUnit(t *testing.T) {
	for _, name := range []string{"jest", "vitest", "mocha", "node-tap", "node-spec"} {
		t.Run(name, func(t *testing.T) {
			log, want := joblogtest.Fixture(t, filepath.Join("testdata", "console"), name, "")
			data := Driver{}.ReadConsole(joblog.Lines(log))
			if data == nil {
				t.Fatal("no runner's output found in the log")
			}
			got, err := report.Parse(data)
			if err != nil {
				t.Fatalf("the log's report does not parse: %v\n%s", err, data)
			}
			if g, w := joblogtest.FailureIDs(got), joblogtest.FailureIDs(want); !slices.Equal(g, w) {
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
