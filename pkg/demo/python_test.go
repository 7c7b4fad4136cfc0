package demo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/gitrepo"
	"github.com/redfix/redfix/pkg/lang"
	"github.com/redfix/redfix/pkg/lang/golang"
	"github.com/redfix/redfix/pkg/lang/python"
	"github.com/redfix/redfix/pkg/lang/python/pythontest"
	"github.com/redfix/redfix/pkg/report"
)

// drivers are the bot's drivers, as the configuration's defaults make them.
func drivers() *lang.Drivers { return lang.New(golang.Driver{}, python.Driver{}) }

const atThreshold = "tests/test_discount.py::test_volume_discount[at_threshold]"

func TestPythonSampleFailsThroughTheDriver(t *testing.T) {
	pythontest.Require(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "repo")
	s, err := BuildWith(ctx, dir, Options{Lang: "python", Drivers: drivers()})
	if err != nil {
		t.Fatal(err)
	}
	if s.Lang != "python" || s.Driver == nil || s.Driver.Name() != "python" || len(s.Commits) != 6 || s.Good != s.Commits[1] || s.Head != s.Commits[5] {
		t.Fatalf("sample = %+v", s)
	}
	rep, err := report.Parse(s.Report)
	if err != nil {
		t.Fatalf("CI report: %v\n%s", err, s.Report)
	}
	if rep.Format != "junit" || rep.Total != 7 || len(rep.Failures) != 1 {
		t.Fatalf("CI report: %s, %d tests, failures %+v, want junit, 7 tests, 1 failure", rep.Format, rep.Total, rep.Failures)
	}
	f := rep.Failures[0]
	if f.ID() != atThreshold || !strings.Contains(f.Message, "9500") {
		t.Fatalf("failure = %+v, want %s asserting 9500", f, atThreshold)
	}
	for _, id := range []string{"tests/test_pricing.py::test_quote", "tests/test_discount.py::test_volume_discount[best_tier_wins]"} {
		if !contains(rep.Passed, id) {
			t.Errorf("%s is not among the passing tests %q", id, rep.Passed)
		}
	}
}

// The history is what the demo says: the tests pass up to the third
// commit, the fourth breaks exactly one, and restoring `>=` at the head
// makes every test pass again, under real pytest.
func TestPythonSampleHistoryBreaksAtTheFourthCommit(t *testing.T) {
	pythontest.Require(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "repo")
	s, err := BuildWith(ctx, dir, Options{Lang: "python", Drivers: drivers()})
	if err != nil {
		t.Fatal(err)
	}
	repo := gitrepo.Repo{Dir: dir}
	failing := func(rev string) []string {
		t.Helper()
		if _, err := repo.Git(ctx, "checkout", "-q", rev); err != nil {
			t.Fatal(err)
		}
		o, err := s.Driver.RunPackages(ctx, dir, s.Packages)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Passed) == 0 || len(o.Build) > 0 {
			t.Fatalf("at %s: %d passed, build %+v:\n%s", rev, len(o.Passed), o.Build, o.Output)
		}
		var ids []string
		for _, f := range o.Failed {
			ids = append(ids, f.ID())
		}
		return ids
	}
	for i, c := range s.Commits {
		got := failing(c)
		want := 0
		if i >= 3 {
			want = 1
		}
		if len(got) != want || want == 1 && got[0] != atThreshold {
			t.Errorf("commit %d fails %q", i+1, got)
		}
	}
	pricing := filepath.Join(dir, "shop", "pricing.py")
	src, err := os.ReadFile(pricing)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(src), "if qty > t.min_qty:", "if qty >= t.min_qty:", 1)
	if fixed == string(src) {
		t.Fatal("the head's pricing.py has no `qty > t.min_qty` to fix")
	}
	if err := os.WriteFile(pricing, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := s.Driver.RunPackages(ctx, dir, s.Packages)
	if err != nil {
		t.Fatal(err)
	}
	if !o.OK() || len(o.Passed) != 7 {
		t.Fatalf("with the fix: %s:\n%s", o.Summary(), o.Output)
	}
}

func TestUnknownLanguageListsTheChoices(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	_, err := BuildWith(context.Background(), dir, Options{Lang: "cobol"})
	if !errors.Is(err, ErrUnknownLanguage) || !strings.Contains(err.Error(), "go, python") {
		t.Fatalf("err = %v, want ErrUnknownLanguage listing go, python", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("an unknown language wrote %s: %v", dir, err)
	}
	if CheckLanguage("python") != nil || CheckLanguage("") != nil || CheckLanguage("Go") == nil {
		t.Error("CheckLanguage: python and the default are samples; Go (not go) is none")
	}
}

func TestPythonSampleNeedsADriver(t *testing.T) {
	_, err := BuildWith(context.Background(), filepath.Join(t.TempDir(), "repo"), Options{Lang: "python"})
	if err == nil || !strings.Contains(err.Error(), "language driver") {
		t.Fatalf("err = %v, want one saying the Python sample's CI needs a language driver", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
