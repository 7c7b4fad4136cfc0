package nodetest

import (
	"bytes"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/redfix/redfix/pkg/report"
)

// The fixtures' lockfiles pin every package exactly and name no registry.
func TestLockfilesNameNoHost(t *testing.T) {
	err := fs.WalkDir(projects, "projects", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "package-lock.json") {
			return err
		}
		data, err := projects.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(`"resolved"`)) {
			t.Errorf("%s names where its packages come from", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The histories' CI reports say what the constants say: every test passes
// before the breaking commit, and at it the named test fails with the
// message, named as the constants name it.
func TestHistoriesBreakTheNamedTest(t *testing.T) {
	Require(t)
	for _, h := range []struct {
		name                string
		archives            []string
		broken              int
		classname, testName string
		message             string
	}{
		{"price", Price, PriceBroken, PriceJUnitClassname, PriceJUnitName, PriceFailure},
		{"cart", Cart, CartBroken, CartJUnitSuite, CartJUnitName, ""},
	} {
		t.Run(h.name, func(t *testing.T) {
			dir, commits := History(t, h.archives...)
			if len(commits) != len(h.archives) {
				t.Fatalf("commits = %d", len(commits))
			}
			before, err := report.ParseJUnit(bytes.NewReader(JUnitAt(t, dir, commits[h.broken-1])))
			if err != nil {
				t.Fatal(err)
			}
			if len(before.Failures) != 0 || len(before.Passed) == 0 {
				t.Fatalf("before the breaking commit: %d failures, %d passed", len(before.Failures), len(before.Passed))
			}
			at, err := report.ParseJUnit(bytes.NewReader(JUnitAt(t, dir, commits[h.broken])))
			if err != nil {
				t.Fatal(err)
			}
			if len(at.Failures) != 1 {
				t.Fatalf("at the breaking commit: failures %+v", at.Failures)
			}
			f := at.Failures[0]
			if f.Package != h.classname || f.Test != h.testName {
				t.Errorf("the failure is named %q / %q, want %q / %q", f.Package, f.Test, h.classname, h.testName)
			}
			if h.message != "" && f.Message != h.message {
				t.Errorf("message = %q, want %q", f.Message, h.message)
			}
			if !slices.ContainsFunc(at.Passed, func(id string) bool { return strings.Contains(id, "round") || strings.Contains(id, "tax") }) {
				t.Errorf("the breaking commit's own new test does not pass: %v", at.Passed)
			}
		})
	}
}

// PriceUnloadable's CI report names the file that no longer loads as the
// constants say.
func TestPriceUnloadableReport(t *testing.T) {
	Require(t)
	dir, commits := History(t, PriceUnloadable...)
	rep, err := report.ParseJUnit(bytes.NewReader(JUnitAt(t, dir, commits[PriceBroken])))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failures) != 1 {
		t.Fatalf("failures = %+v", rep.Failures)
	}
	f := rep.Failures[0]
	if f.Package != PriceUnloadableFile || f.Test != PriceUnloadableFile || !strings.HasPrefix(f.Message, PriceUnloadableMessage) {
		t.Errorf("failure = %q / %q: %q", f.Package, f.Test, f.Message)
	}
}
