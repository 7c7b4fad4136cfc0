package judge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/judge"
	"github.com/redfix/redfix/pkg/unidiff"
)

func TestLoadCasesRejectsBadLines(t *testing.T) {
	ok := `{"id":"a","label":"accept","package":"p","test":"TestA","message":"m","test_source":"func TestA(t *testing.T) {}","patch":"--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"}`
	for _, c := range []struct{ name, data, says string }{
		{"bad label", strings.Replace(ok, `"accept"`, `"maybe"`, 1), `line 1 (a): label "maybe" is neither accept nor reject`},
		{"duplicate id", ok + "\n\n" + ok, "line 3: id a already used on line 1"},
		{"unknown field", strings.Replace(ok, `"id"`, `"verdict":"x","id"`, 1), `line 1: json: unknown field "verdict"`},
		{"no patch", strings.Replace(ok, `"patch":"--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n"`, `"patch":" "`, 1), "line 1 (a): no patch"},
		{"not JSON", "# comment\n{oops", "line 2: "},
		{"empty", "# only a comment\n", "no cases"},
	} {
		if _, err := judge.LoadCases(strings.NewReader(c.data)); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.says)
		}
	}
	cases, err := judge.LoadCases(strings.NewReader("# header\n" + ok + "\n"))
	if err != nil || len(cases) != 1 || cases[0].Input().Tests[0].Name != "TestA" {
		t.Fatalf("LoadCases = %+v, %v", cases, err)
	}
}

// The shipped set: enough cases, both classes, hard negatives, and patches
// that read as unified diffs.
func TestShippedLabelledSet(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "labelled.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := judge.LoadCases(f)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	kinds := map[string]int{}
	for _, c := range cases {
		labels[c.Label]++
		kinds[c.Kind]++
		files, err := unidiff.Parse(c.Patch)
		if err != nil || len(files) == 0 || len(files[0].Hunks) == 0 {
			t.Errorf("%s: patch does not parse: %v", c.ID, err)
		}
		if c.TestSource == "" || c.Message == "" || c.Why == "" {
			t.Errorf("%s: missing test source, message or why", c.ID)
		}
	}
	if len(cases) < 40 || labels["accept"] < 15 || labels["reject"] < 15 || kinds["hard-negative"] < 8 {
		t.Errorf("%d cases, labels %v, kinds %v: want at least 40, both classes, 8 hard negatives", len(cases), labels, kinds)
	}
}
