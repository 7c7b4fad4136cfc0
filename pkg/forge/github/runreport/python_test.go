package runreport

import (
	"context"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
)

// A workflow run whose artifact holds the JUnit XML real pytest wrote (one
// file per job of a matrix, XML declarations and all) becomes a Python
// report: the failing test named as pytest's JUnit names it (triage's
// Python driver resolves that to the node id), the assertion's message,
// frames relative to the checkout; and the report kept for audit parses to
// the same.
func TestCollectPytestJUnitArtifact(t *testing.T) {
	pythontest.Require(t)
	dir, shas := pythontest.History(t, pythontest.Calc...)
	junit := pythontest.JUnitAt(t, dir, shas[len(shas)-1])
	if !strings.HasPrefix(string(junit), "<?xml") {
		t.Fatalf("pytest's report does not start with an XML declaration; the test shows less than it says:\n%s", junit)
	}
	f := newFixture(t)
	f.history()
	run := f.failed(t, ghtest.WorkflowRun{
		Jobs: []*ghtest.Job{{Name: "pytest (3.11)", Conclusion: "failure"}, {Name: "pytest (3.12)", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: "pytest-results", Zip: ghtest.Zip(map[string][]byte{
			"py3.11/junit.xml": junit, "py3.12/junit.xml": junit,
		})}},
	})
	rep, err := (&Collector{}).Collect(context.Background(), f.client, "acme", "calc", run, []string{"pytest-*"})
	if err != nil {
		t.Fatal(err)
	}
	want := pythontest.TestClassname + "." + pythontest.TestName + ": " + pythontest.FailureMessage
	got := failures(t, rep)
	if len(got) != 2 || !strings.HasPrefix(got[0], want) || !strings.HasPrefix(got[1], want) {
		t.Fatalf("failures %q, want %q from each job's report", got, want)
	}
	if rep.Parsed.Format != "junit" || rep.Parsed.Total != 4 {
		t.Errorf("report %s with %d tests, want junit with 4 (2 per job)", rep.Parsed.Format, rep.Parsed.Total)
	}
	for _, fl := range rep.Parsed.Failures {
		if fl.Package != pythontest.TestClassname || fl.Test != pythontest.TestName {
			t.Errorf("failure %s / %s, want pytest's classname and name", fl.Package, fl.Test)
		}
		if len(fl.Frames) == 0 {
			t.Errorf("failure %s has no frames", fl.ID())
		}
		for _, fr := range fl.Frames {
			if strings.HasPrefix(fr, "/") {
				t.Errorf("frame %q is CI's absolute path", fr)
			}
		}
	}
}
