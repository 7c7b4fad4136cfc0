package python

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestFileGroup(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]string{
		"requirements.txt": "", "requirements/base.txt": "", "requirements-prod.txt": "",
		"requirements-test.txt": "test", "requirements_tests.txt": "tests", "test-requirements.txt": "test",
		"requirements/testing.txt": "testing", "requirements-dev.txt": "dev", "lint_requirements.txt": "lint",
	} {
		if got := fileGroup(rel); got != want {
			t.Errorf("fileGroup(%s) = %q, want %q", rel, got, want)
		}
	}
}

// TestSetupInstallsTheTestsGroups: a project that declares a tests' group
// gets it (and its base) installed, not its linters' group nor its other
// requirement files, which name packages the index lacks; a repository
// that asks for a group gets that one.
func TestSetupInstallsTheTestsGroups(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	fn, w := wheel(t, "redfix-testdep", "2.0", map[string]string{"redfix_testdep.py": "def twice(x):\n    return 2 * x\n"})
	ix := newSimpleIndex(t, map[string][]byte{fn: w})
	d.IndexURL = ix.URL + "/simple/"
	dir := repo(t, map[string]string{
		"pyproject.toml":        "[project]\nname = \"app\"\n\n[dependency-groups]\ntest = [\"redfix-testdep\"]\nlint = [\"redfix-nolinter\"]\n",
		"requirements-lint.txt": "redfix-noformatter\n",
		"tests/test_app.py":     "import redfix_testdep\n\n\ndef test_twice():\n    assert redfix_testdep.twice(2) == 4\n",
	})
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	for _, r := range ix.Requests() {
		if strings.Contains(r, "redfix-no") {
			t.Errorf("the index was asked for a group the tests do not need: %s", r)
		}
	}
	if o := mustRun(t, ctx, d, dir, 1, "tests/test_app.py::test_twice"); !slices.Equal(o.Passed, []string{"tests/test_app.py::test_twice"}) {
		t.Errorf("the tests' group is not importable: %s\n%s", o.Summary(), o.Output)
	}
	// Asked for, the linters' group is installed: its package is missing.
	d.Groups = []string{"lint"}
	if err := d.Setup(ctx, dir); err == nil || !strings.Contains(err.Error(), "redfix-nolinter") || !strings.Contains(err.Error(), "redfix-noformatter") {
		t.Errorf("Setup of the lint group: %v; want it failing on its two missing packages", err)
	}
}

// TestSetupWarnsOfAToolThatDoesNotInstall: where the project declares no
// tests' group, every group is installed, but one that does not install
// (a linter the index lacks) is a warning naming it, and the tests run.
func TestSetupWarnsOfAToolThatDoesNotInstall(t *testing.T) {
	t.Parallel()
	d := pythonDriver(t)
	ctx := confined(t)
	fn, w := wheel(t, "redfix-testdep", "2.0", map[string]string{"redfix_testdep.py": "def twice(x):\n    return 2 * x\n"})
	ix := newSimpleIndex(t, map[string][]byte{fn: w})
	d.IndexURL = ix.URL + "/simple/"
	core, logs := observer.New(zap.WarnLevel)
	d.Log = zap.New(core)
	dir := repo(t, map[string]string{
		"pyproject.toml":       "[project]\nname = \"app\"\n\n[project.optional-dependencies]\ndev = [\"redfix-testdep\", \"redfix-nolinter\"]\n",
		"requirements-dev.txt": "redfix-nosphinx\n",
		"tests/test_app.py":    "import redfix_testdep\n\n\ndef test_twice():\n    assert redfix_testdep.twice(2) == 4\n",
	})
	if err := d.Setup(ctx, dir); err != nil {
		t.Fatalf("Setup failed on a tool the tests do not import: %v", err)
	}
	var warned []string
	for _, e := range logs.All() {
		warned = append(warned, e.ContextMap()["requirement"].(string))
	}
	slices.Sort(warned)
	if !slices.Equal(warned, []string{"redfix-nolinter", "redfix-nosphinx"}) {
		t.Errorf("warned of %q; want the two tools the index lacks", warned)
	}
	if o := mustRun(t, ctx, d, dir, 1, "tests/test_app.py::test_twice"); !slices.Equal(o.Passed, []string{"tests/test_app.py::test_twice"}) {
		t.Errorf("the installed group is not importable: %s\n%s", o.Summary(), o.Output)
	}
}
