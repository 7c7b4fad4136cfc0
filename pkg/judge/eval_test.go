package judge_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// The shipped sets, one a language: enough cases, both classes, the kinds
// of wrong patch each must hold, ids unique across them, tests named as
// the language's runner names them, and patches that read as unified diffs
// whose hunk headers count their lines and touch the language's files.
func TestShippedLabelledSet(t *testing.T) {
	sets := []struct {
		file      string
		min, each int // cases; cases of each label
		kinds     map[string]int
		exts      []string
		test      *regexp.Regexp
		// strict: hunk headers count their lines exactly (the Go set's
		// hunks stop short of their counts, which the parser allows).
		strict bool
	}{
		{"labelled.jsonl", 40, 15, map[string]int{"hard-negative": 8}, []string{".go", ".golden"}, regexp.MustCompile(`^Test\w+(/\S+)?$`), false},
		{"labelled-python.jsonl", 24, 10, newSetKinds, []string{".py"}, regexp.MustCompile(`^[\w/]+\.py::\S`), true},
		{"labelled-js.jsonl", 24, 10, newSetKinds, []string{".ts", ".js", ".mjs", ".tsx"}, regexp.MustCompile(`^[\w/.]+\.(test|spec)\.(ts|js|mjs|tsx)::\S`), true},
	}
	seen := map[string]string{}
	for _, s := range sets {
		f, err := os.Open(filepath.Join("testdata", s.file))
		if err != nil {
			t.Fatal(err)
		}
		cases, err := judge.LoadCases(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", s.file, err)
		}
		labels, kinds := map[string]int{}, map[string]int{}
		for _, c := range cases {
			labels[c.Label]++
			kinds[c.Kind]++
			if prev, ok := seen[c.ID]; ok {
				t.Errorf("%s: id %s already used in %s", s.file, c.ID, prev)
			}
			seen[c.ID] = s.file
			if c.TestSource == "" || c.Message == "" || c.Why == "" {
				t.Errorf("%s: %s: missing test source, message or why", s.file, c.ID)
			}
			if !s.test.MatchString(c.Test) {
				t.Errorf("%s: %s: test %q is not named as the runner names it", s.file, c.ID, c.Test)
			}
			checkPatch(t, s.file+": "+c.ID, c.Patch, s.exts, s.strict)
		}
		if len(cases) < s.min || labels["accept"] < s.each || labels["reject"] < s.each {
			t.Errorf("%s: %d cases, labels %v: want at least %d, %d of each label", s.file, len(cases), labels, s.min, s.each)
		}
		for k, n := range s.kinds {
			if kinds[k] < n {
				t.Errorf("%s: %d %s case(s), want at least %d (kinds %v)", s.file, kinds[k], k, n, kinds)
			}
		}
	}
}

// newSetKinds are the kinds of wrong patch every set beyond Go's holds.
var newSetKinds = map[string]int{"special-case": 2, "masking": 2, "over-broad": 2, "wrong-location": 2, "hard-negative": 6, "test-edit": 2, "revert": 2}

// checkPatch: the patch parses and touches files with one of exts; when
// strict, every hunk holds exactly the lines its header counts, with
// nothing left over.
func checkPatch(t *testing.T, name, patch string, exts []string, strict bool) {
	t.Helper()
	files, err := unidiff.Parse(patch)
	if err != nil || len(files) == 0 || len(files[0].Hunks) == 0 {
		t.Errorf("%s: patch does not parse: %v", name, err)
		return
	}
	lines := 0
	for _, f := range files {
		if !slices.ContainsFunc(exts, func(e string) bool { return strings.HasSuffix(f.Path(), e) }) {
			t.Errorf("%s: patch touches %s, want a file ending in one of %v", name, f.Path(), exts)
		}
		lines += 2
		for _, h := range f.Hunks {
			old, new := 0, 0
			for _, l := range h.Lines {
				if l.Kind != '+' {
					old++
				}
				if l.Kind != '-' {
					new++
				}
			}
			if strict && (old != h.OldCount || new != h.NewCount) {
				t.Errorf("%s: hunk at -%d,%d +%d,%d holds %d old and %d new lines", name, h.OldStart, h.OldCount, h.NewStart, h.NewCount, old, new)
			}
			lines += 1 + len(h.Lines)
		}
	}
	if n := strings.Count(strings.TrimSuffix(patch, "\n"), "\n") + 1; strict && n != lines {
		t.Errorf("%s: patch has %d lines, its headers and hunks %d", name, n, lines)
	}
}
