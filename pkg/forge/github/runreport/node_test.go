package runreport

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/forge/github/ghtest"
	"github.com/redfix/redfix/pkg/lang/node/nodetest"
)

// A workflow run whose artifact holds the JUnit XML real vitest wrote for
// a TypeScript repository (one file per job of a node matrix) becomes a
// report naming the failing test by its canonical id (the file, the
// describe blocks and title), with the assertion's message and the frame
// of the failing line relative to the checkout; the report kept for audit
// parses to the same.
func TestCollectVitestJUnitArtifact(t *testing.T) {
	nodetest.Require(t)
	dir, shas := nodetest.History(t, nodetest.Price...)
	junit := nodetest.JUnitAt(t, dir, shas[len(shas)-1])
	f := newFixture(t)
	f.history()
	run := f.failed(t, ghtest.WorkflowRun{
		Jobs: []*ghtest.Job{{Name: "test (20)", Conclusion: "failure"}, {Name: "test (22)", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: "vitest-results", Zip: ghtest.Zip(map[string][]byte{
			"node20/junit.xml": junit, "node22/junit.xml": junit,
		})}},
	})
	rep, err := (&Collector{}).Collect(context.Background(), f.client, "acme", "calc", run, []string{"vitest-*"})
	if err != nil {
		t.Fatal(err)
	}
	want := nodetest.PriceTest + ": " + nodetest.PriceFailure
	if got := failures(t, rep); len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("failures %q, want %q from each job's report", got, want)
	}
	for _, fl := range rep.Parsed.Failures {
		if !slices.Contains(fl.Frames, nodetest.PriceFrame) {
			t.Errorf("failure %s: frames %q, want %s", fl.ID(), fl.Frames, nodetest.PriceFrame)
		}
		for _, fr := range fl.Frames {
			if strings.HasPrefix(fr, "/") {
				t.Errorf("frame %q is CI's absolute path", fr)
			}
		}
		if strings.Contains(fl.Output, "\x1b[") {
			t.Errorf("output keeps colour codes:\n%s", fl.Output)
		}
	}
	if !slices.Contains(rep.Parsed.Passed, nodetest.PricePassing) {
		t.Errorf("passed %q, want %s among them", rep.Parsed.Passed, nodetest.PricePassing)
	}
}

// jest-junit's default dialect names no file: the failure is named by the
// suite and the full name (the Node driver resolves it in the checkout),
// with jest's Expected and Received as its message, not the first line of
// its output; its frames are CI's absolute paths, which the report cannot
// make relative (triage does, from its reproduction), ending in the
// failing line's.
func TestCollectJestJUnitArtifact(t *testing.T) {
	nodetest.Require(t)
	dir, shas := nodetest.History(t, nodetest.Cart...)
	junit := nodetest.JUnitAt(t, dir, shas[len(shas)-1])
	f := newFixture(t)
	f.history()
	run := f.failed(t, ghtest.WorkflowRun{
		Jobs:      []*ghtest.Job{{Name: "jest", Conclusion: "failure"}},
		Artifacts: []*ghtest.Artifact{{Name: "jest-junit", Zip: ghtest.Zip(map[string][]byte{"reports/junit.xml": junit})}},
	})
	rep, err := (&Collector{}).Collect(context.Background(), f.client, "acme", "calc", run, []string{"jest-*"})
	if err != nil {
		t.Fatal(err)
	}
	want := nodetest.CartJUnitSuite + "." + nodetest.CartJUnitName + ": " + nodetest.CartFailure
	if got := failures(t, rep); len(got) != 1 || got[0] != want {
		t.Fatalf("failures %q, want %q", got, want)
	}
	fl := rep.Parsed.Failures[0]
	if len(fl.Frames) == 0 || !strings.HasSuffix(fl.Frames[0], "/"+nodetest.CartFrame) {
		t.Errorf("frames %q, want the failing line %s first", fl.Frames, nodetest.CartFrame)
	}
	for _, fr := range fl.Frames {
		if strings.Contains(fr, "node_modules") {
			t.Errorf("frame %q is jest's own", fr)
		}
	}
}
