package bench

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// labelled is a commit of a real history that changes code and tests
// together, labelled by a person who read its message and its diff.
type labelled struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
	Label   string `json:"label"` // KindFix or KindFeature
}

// The classifier's precision and recall on the labelled samples, from the
// message and links alone (the samples' commits were not run): what
// docs/evaluation.md states. The rules were settled with the first sample
// in view; the second (the tasks a mine of the same project's 2026 history
// found, labelled by a person reading them) was not seen by them. A change
// of the rules that lowers either fails here.
func TestClassifyChangeOnALabelledSample(t *testing.T) {
	for _, c := range []struct {
		file              string
		min               int
		precision, recall float64
	}{
		{file: "urfave-cli.jsonl", min: 60, precision: 0.85, recall: 0.6},
		{file: "urfave-cli-2026.jsonl", min: 30, precision: 0.85, recall: 0.7},
	} {
		precision, recall, n := classifySample(t, filepath.Join("testdata", "fixkind", c.file))
		if n < c.min || precision < c.precision || recall < c.recall {
			t.Errorf("%s: precision %.2f, recall %.2f on %d commits: want at least %.2f and %.2f on %d or more", c.file, precision, recall, n, c.precision, c.recall, c.min)
		}
	}
}

// classifySample classifies the labelled commits of file by their message
// and logs what it got wrong.
func classifySample(t *testing.T, file string) (precision, recall float64, n int) {
	t.Helper()
	var rows []labelled
	if err := readLines(file, func(b []byte) error {
		var r labelled
		err := json.Unmarshal(b, &r)
		rows = append(rows, r)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var tp, fp, unsure, fixes int
	for _, r := range rows {
		kind, why := ClassifyChange(ChangeEvidence{Subject: r.Subject, Body: r.Body})
		if r.Label == KindFix {
			fixes++
		}
		switch {
		case kind == KindFix && r.Label == KindFix:
			tp++
		case kind == KindFix:
			fp++
			t.Logf("%s: taken for a fix: %.12s %q (%s)", filepath.Base(file), r.Commit, r.Subject, strings.Join(why, ", "))
		case r.Label == KindFix:
			t.Logf("%s: fix missed as %s: %.12s %q (%s)", filepath.Base(file), kind, r.Commit, r.Subject, strings.Join(why, ", "))
		}
		if kind == KindUnsure {
			unsure++
		}
	}
	precision = float64(tp) / float64(max(tp+fp, 1))
	recall = float64(tp) / float64(max(fixes, 1))
	t.Logf("%s: %d commits (%d fixes): precision %.2f (%d of %d called fixes), recall %.2f, %d unsure", filepath.Base(file), len(rows), fixes, precision, tp, tp+fp, recall, unsure)
	return precision, recall, len(rows)
}

// The evidence, one kind at a time.
func TestClassifyChangeEvidence(t *testing.T) {
	for _, c := range []struct {
		e    ChangeEvidence
		want string
	}{
		{ChangeEvidence{Subject: "Fix nil pointer in Context.Set", OldBehaviour: true}, KindFix},
		{ChangeEvidence{Subject: "Handle empty input", Body: "Fixes #123"}, KindFix},
		{ChangeEvidence{Subject: "fix(parser): stop at a lone dash"}, KindFix},
		{ChangeEvidence{Subject: "Add support for TOML sources"}, KindFeature},
		{ChangeEvidence{Subject: "feat: timestamps with a time zone"}, KindFeature},
		{ChangeEvidence{Subject: "Parse durations", NewAPI: true}, KindFeature},
		{ChangeEvidence{Subject: "Parse durations", OldBehaviour: true}, KindUnsure},
		// A fix's tag on a feature's words: the words decide.
		{ChangeEvidence{Subject: "Fix:(issue_1720) Add support for reading args from stdin"}, KindFeature},
	} {
		if got, why := ClassifyChange(c.e); got != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.e, got, why, c.want)
		}
	}
}
